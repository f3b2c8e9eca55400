/*
 * HeldInput.pml: the held-input word (the synchronous feedback path) against effects ending on
 * another thread, outside inputs and a termination.
 *
 * Line numbers at commit c37bd09: AE = Sources/Automaton/AutomatonEngine.swift,
 * ESM = Sources/Automaton/EngineStateMachine.swift, ER = Sources/Automaton/EffectRecord.swift.
 *
 * Processes:
 *   P: holds the processing role (it took it for an outside input x0, whose effect r1 starts the
 *      chain). Effect rk's start handler (run by startCommitted AE:422-431, on P) sends value vk at
 *      once, which P holds (hold AE:458-466) or, if it cannot, sends the usual way (ER:139 ->
 *      send(_:from:) ESM:451-472); it may then complete on P (ER:158-166 with onRunner); r1's
 *      handler may send a second value w1 after that. vk, once processed, starts r(k+1)
 *      (k < INPUTS). P processes held values in processHeldInputs (AE:194-207), queued ones in
 *      drain (AE:170-186).
 *   E: ends each effect rk on another thread, at any moment after its start handler began (its
 *      observer handed over): EffectRecord.effectEnded (ER:158-166) -> engine.effectEnded
 *      (AE:487-524) -> machine.effectEnded (ESM:814-841) with onRunner false.
 *   X (THREADS >= 3): sends INPUTS outside inputs (effect-free) with AE:153-166, then, or not,
 *      interrupts the automaton (terminate AE:571-575, ESM:908-944).
 *
 * Memory order. The handshake between the held word and the gate word is a store-load pattern
 * (P: store heldGate, load gate; E: set `blocked` in gate, load heldGate), which needs sequentially
 * consistent operations on both sides; the code uses them (storeWordSequentially AE:464,
 * loadWordSequentially AE:201 and ESM:433, setWordBitsSequentially ESM:818). Promela interleaves
 * steps, which is exactly sequential consistency for those four operations, so the fixed model is
 * faithful there. -DDEFECT=1 gives P a store buffer (a release store and an acquire load, as TSO or
 * C11 acquire/release allow): the store to heldGate may become visible after P's load of gate.
 *
 * Steps: every atomic operation on a word is one step; a critical section is one step except where
 * it contains a sequentially consistent operation of that handshake, which is a step of its own.
 *
 * -DDEFECT=1: the held word stored with a release store, not a sequentially consistent one (and the
 *   gate loaded with acquire), modelled as a store buffer that drains at any time, at the latest
 *   when P takes the lock.
 * -DDEFECT=2: effectEnded off the runner does not set `blocked` (ESM:817-819 removed).
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef INPUTS
#define INPUTS 3
#endif
#ifndef DEFECT
#define DEFECT 0
#endif

#define PROCESSING 1                  /* ProcessingGate ESM:14-17 */
#define BLOCKED    2
#define N INPUTS                      /* records r1..rN of the chain */
#define NOBODY 255
/* values: vk = k (1..N, from rk), w1 = N+1 (from r1), outside input j of X = N+1+j */
#define W1 (N + 1)
#define XV(j) (N + 1 + (j))
#define NV (N + 2 + INPUTS)
#define ORIGIN(v) ((v) <= N -> (v) : ((v) == W1 -> 1 : 0))
/* value status */
#define UNSENT 0
#define PENDING 1                     /* held or queued */
#define DONE 2                        /* processed */
#define DROPPED 3

byte gate = PROCESSING;               /* the gate word (P took it for x0), AE:45 */
byte heldGate = 0;                    /* the held word: the record it names, or 0, AE:97 / ESM:402 */
byte mlock = 0;                       /* the engine's lock */
byte q[NV]; byte qlen = 0;            /* queue ESM:359 (a FIFOQueue with prepend); an input is its value */
byte qi = 0;                          /* scratch for the queue operations (always 0 between steps) */
bool terminated = false;              /* phase == .terminated */
byte pendingTermination = 0;          /* ESM:370 (1: interrupted) */
bool tracked[N + 1];                  /* record.isTracked ER:61 */
bool finished[N + 1];                 /* record.hasFinished ER:63 */
byte pendingInputs[N + 1];            /* record.pendingInputs ER:67 */
bool lifetimeEnded[N + 1];            /* the record's lifetime (ER:163 guard) */
#if DEFECT == 1
byte hgBuf = 0; bool hgBuffered = false;  /* P's store buffer for heldGate */
#endif

/* ghost */
byte roleOwner = NOBODY;
byte status[NV];                      /* each value: UNSENT, PENDING, DONE, DROPPED */
bool handlerBegan[N + 1];             /* rk's start handler has begun: its observer exists */
bool holdStored[N + 1];               /* P has stored the held word naming rk */
bool forgottenBeforeHold[N + 1];      /* rk was forgotten while the held word did not name it yet */
byte heldAt = 0;                      /* the held value, from its hold until it is queued or processed */
byte xWaitsFor[INPUTS + 1];           /* the value held when X's input j was queued */
bool procDone = false;
byte finishedProcs = 0;

inline qAppend(v) { assert(qlen < NV); q[qlen] = v; qlen++ }
inline qPrepend(v) {                  /* FIFOQueue.prepend, used by queueHeld ESM:445 */
  assert(qlen < NV); qi = qlen;
  do :: qi > 0 -> q[qi] = q[qi - 1]; qi-- :: else -> break od;
  q[0] = v; qlen++
}
inline qPop(v) {
  v = q[0]; qi = 0;
  do :: qi + 1 < qlen -> q[qi] = q[qi + 1]; qi++ :: else -> break od;
  qlen--; q[qlen] = 0; qi = 0
}

inline lock()   { mlock == 0 -> mlock = _pid + 1 }
inline unlock() { assert(mlock == _pid + 1); mlock = 0 }
inline settle(v, st) { assert(status[v] == PENDING); status[v] = st }   /* each value handled once */

/* holdsValue ESM:432-434 (a sequentially consistent load), for record r */
#define HOLDS(r) (heldGate == (r))

/* forgetIfFinished ESM:787-800 (the .latest tree is not modelled: see EffectGraph.pml) */
inline forgetIfFinished(r) {
  if
  :: tracked[r] && finished[r] && pendingInputs[r] == 0 && !HOLDS(r) ->
     tracked[r] = false;
     forgottenBeforeHold[r] = !holdStored[r];
     printf("@@ p%d: forgets r%d (the held word reads %d)\n", _pid, r, heldGate)
  :: else
  fi
}

/* inputProcessed(from:) ESM:770-779 */
inline inputProcessed(r) {
  if
  :: HOLDS(r) -> heldGate = 0; forgetIfFinished(r)
  :: !HOLDS(r) && tracked[r] -> assert(pendingInputs[r] > 0); pendingInputs[r]--; forgetIfFinished(r)
  :: else
  fi
}

#if DEFECT == 1
inline flush() { if :: hgBuffered -> heldGate = hgBuf; hgBuffered = false; printf("@@ P's store buffer drains: held word r%d\n", heldGate) :: else fi }
inline plock() { atomic { flush(); lock() } }         /* a lock's RMW drains the store buffer */
#else
inline plock() { lock() }
#endif

/* process(_:) AE:218-239 -> commit AE:245-319 -> commitSuccess ESM:502-606, for value v in P's
   role; `direct`: straight from `held` (AE:205). Sets `next` to the record to start, or 0. */
inline commitValue(v, direct) {
  atomic {
    plock();
    assert(roleOwner == _pid);
    r = ORIGIN(v);
    /* the machine forgets no effect whose value is held (AE:84-86, ESM:788) */
    assert(!direct || r == 0 || tracked[r] || terminated);
    if
    :: terminated -> settle(v, DROPPED); next = 0                /* .aborted ESM:525 */
    :: else -> settle(v, DONE);
       printf("@@ P: processes value %d (origin r%d tracked: %d; from held: %d)\n", v, r, tracked[r], direct);
       if :: v < N -> next = v + 1; tracked[next] = true :: else -> next = 0 fi   /* ESM:583 */
    fi;
    if :: r != 0 -> inputProcessed(r) :: else fi;              /* the defer, ESM:520-524 */
    r = 0;
    unlock()
  }
}

/* P: the start handler of r(next) (AE:422-431, ER:135-143), then commit's hand-over AE:310-314 */
inline runStartHandler() {
  handlerBegan[next] = true; runningHasEnded = false; heldValue = 0;
  /* it sends v(next) at once: hold AE:458-466 */
  if
  :: gate == PROCESSING && !runningHasEnded -> heldValue = next     /* AE:459-463 (acquire load) */
     printf("@@ P: r%d's handler sends v%d: the gate reads processing: held\n", next, next)
  :: else -> usualSend(next)                                          /* ER:139 */
  fi;
  if
  :: heldValue != 0 ->
     heldAt = next; status[next] = PENDING;
#if DEFECT == 1
     d_step { hgBuf = next; hgBuffered = true; holdStored[next] = true;  /* release store: buffered */
              printf("@@ P: stores the held word r%d (into its store buffer)\n", next) }
#else
     d_step { heldGate = next; holdStored[next] = true;            /* AE:464 storeWordSequentially */
              printf("@@ P: stores the held word r%d\n", next) }
#endif
  :: else
  fi;
  /* it may complete at once, on this thread (ER:158-166 onRunner, AE:487-524) */
  if
  :: true
  :: runningHasEnded = true;                                          /* AE:488-490 */
     atomic {
       plock();
       if :: tracked[next] && !finished[next] -> finished[next] = true; forgetIfFinished(next) :: else fi;
       unlock()
     }
     lifetimeEnded[next] = true                                       /* AE:517 */
  fi;
  /* r1's handler may send again: never held (AE:459), the usual way */
  if :: next == 1 -> usualSend(W1) :: else fi;
  held = heldValue; heldValue = 0; next = 0                           /* AE:310-312 */
}

/* engine.send(_:from:) slow path AE:162-165 with ESM:451-472, from an effect on P (role held) */
inline usualSend(v) {
  atomic {
    plock();
    status[v] = PENDING;
    r = ORIGIN(v);
    if
    :: terminated || !tracked[r] || finished[r] -> settle(v, DROPPED) /* ESM:453, 461: after its end */
    :: else -> pendingInputs[r]++;
       assert((gate & PROCESSING) != 0); gate = gate | BLOCKED; qAppend(v)   /* ESM:467-469 .queued */
    fi;
    r = 0;
    unlock()
  }
}

proctype Proc() {
  byte v, r, next, held, heldValue, qv;
  bool runningHasEnded, ok, draining = false;
  next = 1;                                           /* x0 committed r1 (see init), which starts now */
  do
  :: next != 0 -> runStartHandler()
     /* processHeldInputs AE:194-207 */
     do
     :: held == 0 -> break
     :: held != 0 ->
#if DEFECT == 1
        if :: atomic { hgBuffered -> flush() } :: skip fi;              /* the buffer may drain now */
#endif
        if
        :: gate == PROCESSING -> v = held; held = 0; heldAt = 0;         /* AE:201 loadWordSequentially */
           printf("@@ P: the gate reads processing: processes v%d at once\n", v);
           commitValue(v, true); v = 0;                                  /* AE:205 */
           if :: next != 0 -> runStartHandler() :: else fi
        :: gate != PROCESSING ->                                         /* AE:202 queueHeld AE:212-214 */
           atomic {
             plock();
             heldGate = 0;                                               /* ESM:442 */
             printf("@@ P: the gate reads %d: queueHeld(v%d), r%d tracked: %d\n", gate, held, held, tracked[held]);
             if
             :: terminated || !tracked[held] ->                          /* ESM:443: let go */
                assert(terminated || forgottenBeforeHold[held]);         /* only if its end came first */
                settle(held, DROPPED)
             :: else -> pendingInputs[held]++; qPrepend(held)           /* ESM:444-445: to the front */
             fi;
             held = 0; heldAt = 0;
             unlock()
           }
        fi
     od
  :: next == 0 ->
     /* back in send's fast path (AE:157) or in drain (AE:170-186): next() ESM:475-488 */
     if
     :: !draining ->
        atomic { if :: gate == PROCESSING -> gate = 0; roleOwner = NOBODY; ok = true :: else -> ok = false fi }
        if :: ok -> break :: else -> draining = true fi
     :: else
     fi;
     atomic {
       plock();
       if
       :: pendingTermination != 0 -> pendingTermination = 0; gate = BLOCKED; qv = 255   /* ESM:476-479 */
       :: pendingTermination == 0 && qlen > 0 -> qPop(qv)                               /* ESM:481 */
       :: pendingTermination == 0 && qlen == 0 ->
          gate = (terminated -> BLOCKED : 0); roleOwner = NOBODY; qv = 0              /* ESM:486 */
       fi;
       unlock()
     }
     if
     :: qv == 0 -> break
     :: qv == 255 -> qv = 0; atomic { lock(); roleOwner = NOBODY; unlock() }; break   /* perform, finish */
     :: qv > W1 && qv != 255 ->                                         /* an outside input, queued */
        atomic { settle(qv, DONE); assert(xWaitsFor[qv - W1] == 0 || status[xWaitsFor[qv - W1]] >= DONE) };
        qv = 0                                   /* a value held when it was queued went first */
     :: qv != 0 && qv <= W1 ->
        if
        :: !tracked[ORIGIN(qv)] -> atomic { assert(terminated); settle(qv, DROPPED) }   /* .discard */
        :: else -> commitValue(qv, false)
        fi;
        qv = 0
     fi
  od;
  procDone = true;
  finishedProcs++
}

/* E: ends rk off the runner (ER:158-166 -> AE:487-524 -> ESM:814-841) */
proctype Ender() {
  byte k = 1, r;
  do
  :: k <= N ->
     handlerBegan[k] || procDone;                                     /* its observer exists, or never will */
     if
     :: !handlerBegan[k] || lifetimeEnded[k] -> skip                  /* ER:163 */
     :: else ->
        atomic { lock(); r = gate; printf("@@ E: r%d ends, gate reads %d\n", k, r) }   /* ESM:817 loadWord */
#if DEFECT != 2
        if :: (r & PROCESSING) != 0 -> gate = gate | BLOCKED; printf("@@ E: sets blocked\n") :: else fi   /* ESM:818 */
#endif
        atomic {                                                      /* ESM:820-839, holdsValue in forgetIfFinished */
          if :: tracked[k] && !finished[k] -> finished[k] = true; forgetIfFinished(k) :: else fi;
          unlock()
        }
        lifetimeEnded[k] = true                                       /* AE:517 */
     fi;
     r = 0;
     k++
  :: else -> break
  od;
  finishedProcs++
}

/* X: outside inputs (AE:153-166, effect-free), then maybe an interruption (terminate) */
proctype Outside() {
  byte j = 1, k;
  bool ok;
  do
  :: j <= INPUTS ->
     atomic { if :: gate == 0 -> gate = PROCESSING; roleOwner = _pid; ok = true :: else -> ok = false fi }  /* AE:154 */
     if
     :: ok -> atomic { status[XV(j)] = PENDING; settle(XV(j), DONE) };      /* AE:156 */
        atomic { if :: gate == PROCESSING -> gate = 0; roleOwner = NOBODY; ok = true :: else -> ok = false fi }
        if                                          /* AE:157-158: an end on E set `blocked`: drain */
        :: !ok -> atomic { lock(); assert(qlen == 0 && pendingTermination == 0);
                           gate = (terminated -> BLOCKED : 0); roleOwner = NOBODY; unlock() }
        :: else
        fi
     :: else ->
        atomic {
          lock();
          status[XV(j)] = PENDING;
          if
          :: terminated -> settle(XV(j), DROPPED)
          :: else ->
             if
             :: (gate & PROCESSING) != 0 -> gate = gate | BLOCKED; xWaitsFor[j] = heldAt; qAppend(XV(j))
             :: else -> assert(qlen == 0);                /* nothing queued while nobody processes */
                gate = gate | PROCESSING; roleOwner = _pid; settle(XV(j), DONE);   /* processes it */
                gate = (terminated -> BLOCKED : 0); roleOwner = NOBODY   /* and drains: nothing queued */
             fi
          fi;
          unlock()
        }
     fi;
     ok = false;
     j++
  :: else -> break
  od;
  if
  :: skip
  :: atomic {                                                         /* terminate(.interrupted) */
       lock();
       terminated = true; gate = gate | BLOCKED;                      /* ESM:910-911 */
       do :: qlen > 0 -> qPop(k); settle(k, DROPPED) :: else -> break od;   /* ESM:915-916 */
       k = 1;
       do :: k <= N -> tracked[k] = false; k++ :: else -> break od;   /* ESM:918-926 */
       if
       :: (gate & PROCESSING) != 0 -> pendingTermination = 1          /* ESM:939-942 */
       :: else -> gate = BLOCKED                                      /* performs it, finishes: ESM:952 */
       fi;
       k = 0;
       unlock()
     }
     k = 1;
     do :: k <= N -> lifetimeEnded[k] = true; k++ :: else -> break od;   /* cancel: lifetimes end */
     k = 0
  fi;
  finishedProcs++
}

init {
  byte i;
  atomic {
    tracked[1] = true; roleOwner = 1;                   /* P (pid 1) holds the role and committed r1 */
    run Proc(); run Ender();
#if THREADS >= 3
    run Outside();
#endif
  }
  finishedProcs == THREADS;
  /* Everything has finished: every value processed or dropped where allowed, nothing tracked */
  assert(roleOwner == NOBODY && mlock == 0 && (gate & PROCESSING) == 0 && heldGate == 0 && qlen == 0);
  i = 1;
  do
  :: i < NV -> assert(status[i] != PENDING); i++
  :: else -> break
  od;
  i = 1;
  do
  :: i <= N -> assert(!tracked[i]); i++                               /* no record is kept for ever */
  :: else -> break
  od
}
