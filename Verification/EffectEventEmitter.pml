/*
 * EffectEventEmitter.pml: the emitter role of `effectEvents` (EffectEventGate) and the skip of
 * events nobody can hear, against an observer that comes and goes.
 *
 * Line numbers at commit c37bd09: ESM = Sources/Automaton/EngineStateMachine.swift,
 * AE = Sources/Automaton/AutomatonEngine.swift, SC = Sources/Signals/SignalCore.swift.
 *
 * Processes (strategy .latest):
 *   P: the processing role. For effect k = 1..INPUTS: commits the input that starts it (commitSuccess
 *      ESM:502-606), which replaces effect k-1 if still running: the cancellation is decided under
 *      the lock (ESM:600-605) and sent by P (AE:283-290) or queued; then emits `started` without the
 *      lock (emit AE:365-373) and starts the effect (AE:309). Then the automaton is released:
 *      terminate (ESM:908-944), cancel (AE:612-634), endEffectEvents (AE:639-641).
 *   E(i), i < THREADS-1: ends effects k = i+1, i+THREADS, ... on another thread, once started
 *      (effectEnded AE:487-516 with ESM:814-841): `ended` is decided under the lock.
 *   O: observes effectEvents, disposes of that observation, observes again and stays (SC:433, 496).
 *
 * Decision order. Each decided event gets the next slot of a ghost clock `clk` at the step that
 * decides it: the claim of the role (takeWordBit under the lock, or emit's CAS), or the enqueue
 * under the lock; an event skipped as unheard is decided at its first load, of the gate word
 * (ESM:32-38: it "counts as decided when that thread ... finds it free with nobody observing"), so
 * that load reserves a slot, which stays empty unless the event is skipped. The terminal event gets
 * a slot too. The observer checks, for each observation: what it hears is in slot order with no
 * decided slot between two heard ones (gap-free), starts no later than the first slot decided after
 * its observe, and, for the last observation, ends with the last slot decided (nothing lost, nothing
 * after the terminal event).
 *
 * The signal itself is abstracted: each send (SC:226) is one step that delivers to the observer
 * attached then; observe and dispose are one step each; its word is `unobserved` iff no observer is
 * attached and it is not closed (isUnobserved SC:214-216 also reads `delivering` and `pending`,
 * which only make it false more often: fewer skips). SignalDelivery.pml checks that a send reaches
 * exactly the observers attached when it is linearized. `effectEvents` is made on first read
 * (Sources/Signals/OnDemandSignal.swift): until then `isUnobserved` is true and a send delivers to
 * nobody, which is this model's `unobserved` word with no observer (it is also true once the signal
 * ended with nothing made, when no effect event is decided any more); the making is one
 * compare-and-swap, before the maker's first observe, so it adds no interleaving this model lacks.
 *
 * -DDEFECT=1: the eighth pass's emitter-role gap (fixed in 4ec1c5d): an event is skipped when
 * effectEvents has no observer, without checking that the gate word is 0 (reachesNobody ESM:51-53
 * without `gate.loadWord() == 0`).
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

#define EMITTING 1                    /* EffectEventGate, ESM:40-42 */
#define PENDING  2
#define ENDERS (THREADS - 1)
#define OCAP (2*INPUTS + 1)
#define NONE 0

byte eventGate = 0;                   /* the effect-event word, AE:47 / ESM:395 */
byte mlock = 0;                       /* the engine's lock (machine, AE:43) */
chan outbox = [OCAP] of { byte };     /* effectEventOutbox ESM:393; an event is its slot */
bool tracked[INPUTS + 1];             /* record.isTracked, running (ESM:363, EffectRecord:61) */
bool started[INPUTS + 1];             /* ghost: startCommitted has run (AE:309), so it can end */
bool terminated = false;              /* phase == .terminated, ESM:358 */
bool sigObserved = false;             /* effectEvents' observers is not empty (SC:89) */
bool sigClosed = false;               /* effectEvents' `closed` bit (SC:20) */

/* ghost: the decision order and the observer's record */
byte clk = 0;                         /* slots handed out so far */
int  real = 0;                        /* bit t: slot t holds a decided event (sent, queued or skipped) */
byte termSlot = 0;                    /* slot of the terminal event */
byte heardUpTo = 0;                   /* last slot heard in this observation, or clk at its observe */
bool heardAny = false;                /* this observation has heard something */
byte finishedProcs = 0;

inline lock()   { mlock == 0 -> mlock = _pid + 1 }
inline unlock() { assert(mlock == _pid + 1); mlock = 0 }
/* no decided slot strictly between a and b */
#define NONE_BETWEEN(a, b) ((real & (((1 << (b)) - 1) & ~((1 << ((a) + 1)) - 1))) == 0)
inline decide(slot) { clk++; assert(clk < 31); slot = clk; real = real | (1 << clk) }   /* slots fit `real` */

/* effectEvents' send (SC:226): one step, delivered to the observer attached now */
inline sigSend(slot) {
  d_step {
    if
    :: sigClosed -> assert(false)                     /* an event sent after the terminal event */
    :: else
    fi;
    if
    :: sigObserved ->
       if
       :: !heardAny && slot <= heardUpTo -> skip         /* decided before the observe, on its way */
       :: else -> assert(slot > heardUpTo && NONE_BETWEEN(heardUpTo, slot))  /* in order, gap-free */
       fi;
       heardUpTo = slot; heardAny = true
    :: else
    fi;
    if :: slot == termSlot -> sigClosed = true :: else fi;
    printf("@@ p%d sends slot %d (an observer is attached: %d)\n", _pid, slot, sigObserved)
  }
}

/* finishEmitting AE:392-395 and sendQueuedEffectEvents AE:399-403 (nextQueuedEffectEvent ESM:875-882) */
inline finishEmitting() {
  atomic { if :: eventGate == EMITTING -> eventGate = 0; ok = true :: else -> ok = false fi }   /* AE:393 */
  if
  :: !ok ->
     do
     :: atomic {
          lock();
          if
          :: empty(outbox) -> eventGate = 0; ev = NONE            /* ESM:876-878 */
          :: outbox?ev -> eventGate = EMITTING                    /* ESM:880 */
          fi;
          unlock()
        }
        if :: ev == NONE -> break :: else -> sigSend(ev); ev = NONE fi   /* AE:401 */
     od
  :: else
  fi;
  ok = false
}

/* claimEmitter ESM:855-857 = takeWordBit(emitting, orSet: pending), load and CAS as one step */
inline claimEmitter() {
  if
  :: (eventGate & EMITTING) != 0 -> eventGate = eventGate | PENDING; claimed = false
  :: else -> eventGate = eventGate | EMITTING; claimed = true
  fi
}

/* effectEventsReachNobody ESM:862-864 = reachesNobody ESM:51-53, called with the lock held
   (the lock stays held across its loads: other threads' lock-free steps come between them).
   Sets `nobody`; a reserved slot is in `res` (0 if none). */
inline reachesNobodyLocked() {
#if DEFECT == 1
  atomic { nobody = (!sigObserved && !sigClosed); if :: nobody -> decide(res) :: else fi }
#else
  atomic { if :: eventGate == 0 -> clk++; res = clk :: else -> res = 0 fi }   /* gate.loadWord() == 0 */
  if
  :: res != 0 ->
     atomic { nobody = (!sigObserved && !sigClosed);                          /* events.isUnobserved */
              if :: nobody -> real = real | (1 << res) :: else fi }
  :: else -> nobody = false
  fi;
#endif
  skip
}

proctype P() {
  byte k = 1, j, ev, e1, e2, res;
  bool ok, claimed, nobody;
  do
  :: k <= INPUTS ->
     /* commitSuccess ESM:502-606: under .latest the previous effect's chain is cancelled (ESM:527-535) */
     atomic {
       lock();
       tracked[k] = true;                                  /* ESM:583 tracked.append */
       if :: k > 1 && tracked[k - 1] -> tracked[k - 1] = false; ok = true   /* cancelChain ESM:754-766 */
          :: else -> ok = false
       fi
     }
     if
     :: ok ->                                              /* ESM:600: something cancelled */
        reachesNobodyLocked();
        if
        :: nobody -> atomic { ok = false; unlock();        /* .committed, nothing sent */
                     printf("@@ P: skips 'effect %d cancelled' (slot %d): nobody hears it\n", k - 1, res); res = 0 }
        :: else ->
           atomic {
             res = 0;
             claimEmitter();                               /* ESM:601 */
             decide(e1);
             printf("@@ P: decides 'effect %d cancelled' as slot %d (claimed the role: %d)\n", k - 1, e1, claimed);
             if :: !claimed -> outbox!e1; e1 = NONE :: else fi;   /* ESM:602-604 queue */
             unlock()
           }
           if :: claimed -> claimed = false; sigSend(e1); e1 = NONE; finishEmitting() :: else fi  /* AE:283-290 */
        fi
     :: else -> unlock()
     fi;
     ok = false;
     /* emit(record, .started) AE:365-373, without the lock */
#if DEFECT == 1
     atomic { nobody = (!sigObserved && !sigClosed); if :: nobody -> decide(res) :: else fi }
#else
     atomic { if :: eventGate == 0 -> clk++; res = clk :: else -> res = 0 fi }  /* ESM:52 gate load */
     if
     :: res != 0 ->
        atomic { nobody = (!sigObserved && !sigClosed); if :: nobody -> real = real | (1 << res) :: else fi }
     :: else -> nobody = false
     fi;
#endif
     if
     :: nobody -> nobody = false;                          /* AE:366: reaches nobody */
        printf("@@ P: skips 'effect %d started' (slot %d): nobody hears it\n", k, res); res = 0
     :: else ->
        res = 0;
        atomic {                                           /* AE:367 CAS(expected: 0, desired: emitting) */
          if :: eventGate == 0 -> eventGate = EMITTING; ok = true; decide(e1);
                printf("@@ P: claims the role (CAS), decides 'effect %d started' as slot %d\n", k, e1)
             :: else -> ok = false fi
        }
        if
        :: ok -> ok = false; sigSend(e1); e1 = NONE; finishEmitting()    /* AE:368-370 */
        :: else ->                                         /* sendInOrder AE:378-388 */
           atomic { lock(); claimEmitter(); decide(e1);
                    printf("@@ P: decides 'effect %d started' as slot %d (claimed the role: %d)\n", k, e1, claimed);
                    if :: !claimed -> outbox!e1; e1 = NONE :: else fi; unlock() }
           if :: claimed -> claimed = false; sigSend(e1); e1 = NONE; finishEmitting() :: else fi
        fi
     fi;
     started[k] = true;                                    /* startCommitted AE:309 */
     k++
  :: else -> break
  od;
  /* Released: terminate ESM:908-944 (P holds the role, so performs it), then perform AE:599-603 */
  atomic {
    lock(); terminated = true;
    j = 1; ok = false;
    do :: j <= INPUTS -> if :: tracked[j] -> tracked[j] = false; ok = true :: else fi; j++  /* ESM:918-926 */
       :: else -> break
    od;
    j = 0;
    unlock()
  }
  if
  :: ok ->                                                 /* cancel AE:612-634: no skip there */
     atomic {
       lock(); claimEmitter();                             /* AE:620 */
       decide(e1);                                         /* one cancellation (at most one runs here) */
       printf("@@ P: decides 'effect %d cancelled' (released) as slot %d (claimed the role: %d)\n", INPUTS, e1, claimed);
       if :: !claimed -> outbox!e1; e1 = NONE :: else fi;  /* AE:621-624 */
       unlock()
     }
     if :: claimed -> claimed = false; sigSend(e1); e1 = NONE; finishEmitting() :: else fi  /* AE:627-633 */
  :: else
  fi;
  ok = false;
  /* endEffectEvents(with: .completed) AE:639-641 -> sendInOrder */
  atomic {
    lock(); claimEmitter(); decide(e1); termSlot = e1;
    printf("@@ P: decides 'completed' as slot %d (claimed the role: %d)\n", e1, claimed);
    if :: !claimed -> outbox!e1; e1 = NONE :: else fi;
    unlock()
  }
  if :: claimed -> claimed = false; sigSend(e1); e1 = NONE; finishEmitting() :: else fi
  finishedProcs++
}

proctype E(byte me) {
  byte k = me + 1, ev, e1, res;
  bool ok, claimed, nobody;
  do
  :: k <= INPUTS ->
     started[k];                                           /* its observer exists once it has started */
     atomic {                                              /* effectEnded AE:491-503 / ESM:814-841 */
       lock();
       if :: tracked[k] -> tracked[k] = false; ok = true :: else -> ok = false fi   /* ESM:820-839 */
     }
     if
     :: ok ->
        reachesNobodyLocked();                             /* AE:493 */
        if
        :: nobody -> atomic { ok = false; unlock();
                     printf("@@ E%d: skips 'effect %d ended' (slot %d): nobody hears it\n", me, k, res); res = 0 }
        :: else ->
           atomic {
             res = 0;
             claimEmitter();                               /* AE:496 */
             decide(e1);
             printf("@@ E%d: decides 'effect %d ended' as slot %d (claimed the role: %d)\n", me, k, e1, claimed);
             if :: !claimed -> outbox!e1; e1 = NONE :: else fi;   /* AE:497 */
             unlock()
           }
           if :: claimed -> claimed = false; sigSend(e1); e1 = NONE; finishEmitting() :: else fi  /* AE:505-516 */
        fi
     :: else -> unlock()
     fi;
     ok = false; nobody = false;
     k = k + ENDERS
  :: else -> break
  od;
  finishedProcs++
}

/* observe (SC:433) and dispose (SC:496) on effectEvents: one step each */
inline observe() {
  d_step {
    if
    :: sigClosed -> skip                                   /* hears the terminal event at once */
    :: else -> sigObserved = true
    fi;
    heardUpTo = clk; heardAny = false;
    printf("@@ O observes (slots decided so far: %d)\n", clk)
  }
}

proctype O() {
  if
  :: observe();
     d_step { sigObserved = false; printf("@@ O disposes of its observation\n") }   /* removeObserver */
  :: skip
  fi;
  observe();
  finishedProcs++
}

init {
  byte i;
  atomic {
    run P(); run O();
    i = 0; do :: i < ENDERS -> run E(i); i++ :: else -> break od
  }
  finishedProcs == ENDERS + 2;
  assert(mlock == 0 && eventGate == 0 && empty(outbox) && sigClosed);
  /* the last observation heard every event decided after its observe, up to the terminal event */
  assert(NONE_BETWEEN(heardUpTo, clk + 1));
  assert(NONE_BETWEEN(termSlot, clk + 1))                   /* nothing decided after the terminal event */
}
