/*
 * SignalDelivery.pml: a signal's delivery protocol (Sources/Signals/SignalCore.swift).
 *
 * Line numbers: SC = SignalCore.swift, LK = Locking.swift, at commit c37bd09.
 *
 * Processes (SCENARIO picks who races the senders):
 *   Sender(s), s < THREADS: sends values 1..INPUTS with send(.value) (SC:226).
 *   ObserverA (token 0; scenarios 1, 2): observes at any moment (SC:433) and stays. It must hear
 *     exactly the values linearized after its attachment, in order per sender, then the terminal
 *     event if any.
 *   ObserverB (token 1; scenarios 1, 3): observes, then disposes of its observation (SC:496).
 *   Ender: scenario 2: send(.completed) (terminal events always take the lock, SC:228);
 *          scenario 3: releases the Signal handle (handleReleased, SC:517), which interrupts the
 *          signal once no observer is left (endIfUnreachableWithLockHeld, SC:526).
 *
 * Steps. The lock-free operations on the word are one step each, as in the code: the uncontended
 * send's load (SC:238), its CAS that takes the role (SC:240), its CAS that gives it back (SC:244).
 * A critical section (lock ... unlock) is one step. That is a reduction, and sound: taking the lock
 * is a right mover, releasing it a left mover, data guarded by the lock is both; inside, the word is
 * changed (a) by a load+CAS whose failure only loops back (SC:280-301, LK:191-198), merged into one
 * step because a failed iteration changes nothing, or (b) by the holder of the delivering role, which
 * no lock-free operation of another thread can then change (a CAS from 0 fails); another thread's
 * load that sees `delivering` only sends it to the lock, which waits for the critical section, and
 * its send then has the effect of an uncontended send made after it.
 * Delivery: `observers` belongs to the role holder and the observers are ghost recorders that never
 * call back into the signal, so deliverValue (SC:327) is done in the step that gave the thread the
 * value (the CAS that took the role, or the critical section that dequeued it).
 *
 * -DDEFECT=1, the near miss "a hand-back of a role without the lock while `pending` is set": the
 * uncontended send gives the role back with a plain store (releaseDeliveringRole's store, without
 * the lock) instead of compareExchangeWord(expected: delivering, desired: 0) (SC:244), so it never
 * drains what was queued meanwhile.
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef INPUTS
#define INPUTS 3
#endif
#ifndef SCENARIO
#define SCENARIO 1
#endif
#ifndef DEFECT
#define DEFECT 0
#endif

#define DELIVERING 1                  /* DeliveryState, SC:17-22 */
#define PENDING    2
#define CLOSED     4
#define UNOBSERVED 8

#define NOBS 2                        /* observer tokens: 0 = A, 1 = B (SC:478) */
#define QCAP (THREADS*INPUTS + NOBS + 1)
#define K_VALUE    1                  /* Work.event(.value(v)), SC:64; arg = sender*8 + seq */
#define K_TERMINAL 2                  /* Work.event(terminal); arg = NOBODY */
#define K_ADD      3                  /* Work.add(Entry), SC:65; arg = token */
#define K_DONE     4                  /* (local) drain found nothing queued */
#define NOBODY 255

byte word = UNOBSERVED;               /* the lock's atomic word; init stores `unobserved`, SC:100-102 */
byte lockOwner = 0;                   /* the lock's mutex (LK:202-209): 0 free, else _pid+1 */
chan pending = [QCAP] of { byte, byte };  /* pending: FIFOQueue<Work>, SC:71 */
byte pendingRemovals = 0;             /* pendingRemovals, SC:75 (a set of tokens) */
byte observers = 0;                   /* observers and deliveryList, SC:89-95 (a set of tokens) */
bool terminal = false;                /* terminal != nil, SC:70 */
byte observerCount = 0;               /* observerCount, SC:78 */
bool isHandleReleased = false;        /* isHandleReleased, SC:80 */

/* ghost state, for the properties only */
byte roleOwner = NOBODY;              /* who holds `delivering` */
byte lin[THREADS];                    /* values of each sender linearized (accepted, or dropped unheard) */
byte heard[NOBS*THREADS];             /* last value each observer heard from each sender */
bool heardTerm[NOBS];
bool attachedA = false;
bool removedB = false, closedBeforeRemB = false;   /* B's removal has taken effect; and after the end? */
bool observedB = false;               /* observe() needs the Signal handle: it precedes its release */
byte finishedProcs = 0;

inline lock()   { lockOwner == 0 -> lockOwner = _pid + 1 }
inline unlock() { assert(lockOwner == _pid + 1); lockOwner = 0 }
inline takeRole() { assert(roleOwner == NOBODY); roleOwner = _pid }    /* one role holder at a time */
inline giveRole() { assert(roleOwner == _pid); roleOwner = NOBODY }
/* releaseDeliveringRole SC:401-403: clears delivering and pending (role holder, lock held) */
inline releaseDeliveringRole() { giveRole(); word = word & (CLOSED | UNOBSERVED) }
inline linearize(s, n) { assert(lin[s] + 1 == (n)); lin[s]++ }        /* each value once, in order */

/* deliverValue SC:327-338: value n of sender s reaches every attached observer */
inline deliverValue(s, n) {
  assert(roleOwner == _pid);
  t = 0;
  do
  :: t < NOBS ->
     if
     :: observers & (1 << t) ->
        assert(!heardTerm[t]);                              /* nothing after the terminal event */
        assert(heard[t*THREADS + (s)] + 1 == (n));          /* per sender: in order, no gap, no duplicate */
        assert(t != 1 || !removedB);                        /* nothing after a removal (see forgetB) */
        heard[t*THREADS + (s)] = (n);
        printf("@@ p%d delivers: observer %d hears S%d.%d\n", _pid, t, s, n)
     :: else
     fi;
     t++
  :: else -> break
  od;
  t = 0
}

/* Ghost: once B's removal has been applied nothing more reaches it: its record is dropped, so that
   states differing only in it are one. (In the code, a delivery in progress when the removal takes
   effect may still reach it; here a delivery is one step, so none is in progress then.) */
inline forgetB() { u = 0; do :: u < THREADS -> heard[THREADS + u] = 0; u++ :: else -> break od; u = 0 }

inline hearTerminal(tok) {
  assert(!heardTerm[tok]);                                  /* the terminal event at most once */
  assert(tok != 1 || !removedB || closedBeforeRemB);
  heardTerm[tok] = true;
  printf("@@ p%d: observer %d hears the terminal event\n", _pid, tok)
}

/* appendObserver SC:149 / detachObserver SC:174, with changeUnobservedBit SC:203 */
inline appendObserver(tok) {
  assert(roleOwner == _pid);
  if :: observers == 0 -> word = word & ~UNOBSERVED :: else fi;
  observers = observers | (1 << (tok))
}
inline detachObserver(tok) {
  assert(roleOwner == _pid);
  observers = observers & ~(1 << (tok));
  if :: observers == 0 -> word = word | UNOBSERVED :: else fi
}

/* deliverTerminal SC:342-358 (its caller holds the role) */
inline deliverTerminal() {
  atomic { lock(); /* hasTakenTermination, onTermination: SC:343-347 */ unlock() }
  d_step {
    assert(roleOwner == _pid);
    notified = observers; observers = 0;                    /* detachAllObservers SC:349, no lock */
    t = 0;
    do                                                      /* SC:350-352 */
    :: t < NOBS -> if :: notified & (1 << t) -> hearTerminal(t) :: else fi; t++
    :: else -> break
    od;
    t = 0; notified = 0
  }
  atomic { lock(); terminal = true; observerCount = 0; unlock() }   /* SC:354-357 */
}

/* drain() SC:363-395, by the role holder: one critical section per iteration */
inline drain() {
  do
  :: atomic {
       lock();                                              /* SC:365 */
       t = 0;                                               /* applyPendingRemovals SC:366, 416-428 */
       do
       :: t < NOBS ->
          if :: (pendingRemovals & observers & (1 << t)) != 0 ->
                detachObserver(t); pendingRemovals = pendingRemovals & ~(1 << t);
                if :: t == 1 -> forgetB() :: else fi
             :: else
          fi; t++
       :: else -> break
       od;
       t = 0;
       if
       :: empty(pending) ->                                 /* SC:367-373: nothing queued */
          pendingRemovals = 0;                              /* SC:369 */
          releaseDeliveringRole(); unlock();                /* SC:370-371 */
          printf("@@ p%d drain: nothing queued, gives the role up\n", _pid);
          kind = K_DONE
       :: nempty(pending) ->
          pending?kind,arg;                                 /* SC:367 */
          printf("@@ p%d drain: dequeues kind %d arg %d\n", _pid, kind, arg);
          if
          :: kind == K_VALUE ->                             /* SC:376-378 */
             unlock(); deliverValue(arg / 8, arg % 8); kind = 0; arg = 0
          :: kind == K_TERMINAL -> unlock()                 /* SC:376-377, then deliverTerminal */
          :: kind == K_ADD ->                               /* SC:379-391 */
             if
             :: (pendingRemovals & (1 << arg)) != 0 ->      /* SC:380-383: detached before attached */
                pendingRemovals = pendingRemovals & ~(1 << arg); forgetB(); unlock(); kind = 0; arg = 0
             :: else ->
                if
                :: terminal -> unlock(); hearTerminal(arg)  /* SC:384-386 */
                :: else -> appendObserver(arg); unlock()    /* SC:387-389 */
                fi;
                kind = 0; arg = 0
             fi
          fi
       fi
     }
     if
     :: kind == K_DONE -> kind = 0; break
     :: kind == K_TERMINAL -> kind = 0; arg = 0; deliverTerminal()
     :: else
     fi
  od
}

/* sendWithLockHeld SC:277-308, entered with the lock held. Sets `took` if this thread now holds
   the role and must deliver and drain; otherwise it has released the lock. */
inline sendWithLockHeld(kd, s, n) {
  closing = (kd == K_TERMINAL -> CLOSED : 0);              /* SC:278 */
  w = word;                                                /* SC:280 */
  took = false;
  if
  :: (w & CLOSED) != 0 -> unlock()                          /* SC:281-284 */
  :: (w & CLOSED) == 0 && (w & DELIVERING) != 0 ->          /* SC:285-293: queue behind the deliverer */
     word = w | PENDING | closing;                          /* SC:288 */
     printf("@@ p%d: finds the role held, queues kind %d S%d.%d, sets pending\n", _pid, kd, s, n);
     pending!kd,(s)*8 + (n);                                /* SC:291 */
     if :: kd == K_VALUE -> linearize(s, n) :: else fi;
     unlock()
  :: (w & (CLOSED | DELIVERING)) == 0 && observers == 0 && closing == 0 ->
     linearize(s, n); unlock()                              /* SC:295-299: nobody to tell */
  :: (w & (CLOSED | DELIVERING)) == 0 && (observers != 0 || closing != 0) ->
     word = w | DELIVERING | closing; takeRole();           /* SC:300 */
     printf("@@ p%d: takes the role under the lock for kind %d S%d.%d\n", _pid, kd, s, n);
     if :: kd == K_VALUE -> linearize(s, n) :: else fi;
     unlock(); took = true                                  /* SC:303 */
  fi;
  w = 0; closing = 0
}

/* takeDeliveringRoleOrMarkPending SC:409 = takeWordBit(delivering, orSet: pending) LK:190-199 */
inline takeWordBit() {
  w = word;
  if
  :: (w & DELIVERING) != 0 -> word = w | PENDING; took = false   /* LK:194 */
  :: else -> word = w | DELIVERING; took = true; takeRole()      /* LK:195 */
  fi;
  w = 0
}

/* observe(_:) SC:433-443 with attach(_:) SC:477-489: one critical section */
inline observe(tok) {
  atomic {
    lock();
    if
    :: terminal -> unlock(); hearTerminal(tok)              /* SC:435-438 */
    :: else ->
       observerCount++;                                     /* SC:478-481 */
       takeWordBit();                                       /* SC:482: linearizes the attachment */
       attachedA = attachedA || tok == 0;                   /* ghost: it hears what follows */
       printf("@@ observer %d attaches (took the role: %d)\n", tok, took);
       t = 0; do :: t < THREADS -> heard[(tok)*THREADS + t] = lin[t]; t++ :: else -> break od; t = 0;
       if
       :: took -> appendObserver(tok); releaseDeliveringRole()   /* SC:483-484 */
       :: else -> pending!K_ADD,tok                         /* SC:486 */
       fi;
       took = false; unlock()                               /* SC:441 */
    fi
  }
}

/* removeObserver SC:496-514, then endIfUnreachableWithLockHeld SC:526-532: one critical section */
inline removeObserver(tok) {
  atomic {
    lock();
    if
    :: terminal -> unlock()                                 /* SC:498-501 */
    :: else ->
       observerCount--;                                     /* SC:502 */
       takeWordBit();                                       /* SC:504: linearizes the removal */
       removedB = true; closedBeforeRemB = ((word & CLOSED) != 0);
       printf("@@ observer 1 removed (took the role: %d)\n", took);
       if
       :: took -> if :: (observers & (1 << (tok))) != 0 -> detachObserver(tok) :: else fi;  /* SC:505-507 */
                  forgetB(); releaseDeliveringRole()        /* SC:508 */
       :: else -> pendingRemovals = pendingRemovals | (1 << (tok))   /* SC:510 */
       fi;
       if                                                   /* SC:526-531 */
       :: isHandleReleased && observerCount == 0 && (word & CLOSED) == 0 ->
          sendWithLockHeld(K_TERMINAL, 0, 0)                /* .interrupted */
       :: else -> took = false; unlock()
       fi
    fi
  }
  if :: took -> took = false; deliverTerminal(); drain() :: else fi   /* SC:304-305 */
}

proctype Sender(byte me) {
  byte n = 1, w, kind, arg, t, u, closing, notified;
  bool ok, took;
  do
  :: n <= INPUTS ->
     /* send(_:) SC:226-230 -> deliverUncontended SC:237-248 */
     atomic {
       w = word;                                            /* SC:238 loadWord (acquire) */
       if :: w == UNOBSERVED -> linearize(me, n); printf("@@ S%d.%d: nobody observes, dropped\n", me, n)
          :: else fi                                        /* SC:239: reaches nobody, dropped */
     }
     if
     :: w == UNOBSERVED -> skip
     :: w == 0 ->
        atomic {                                            /* SC:240 CAS(expected: 0, desired: delivering) */
          if
          :: word == 0 -> word = DELIVERING; ok = true; takeRole(); linearize(me, n);
             printf("@@ S%d.%d: takes the role (CAS 0 -> delivering)\n", me, n);
             deliverValue(me, n)                            /* SC:243 */
          :: else -> ok = false
          fi
        }
        if
        :: ok ->
#if DEFECT == 1
           /* DEFECT: the role given back with a plain store, without the lock */
           d_step { releaseDeliveringRole(); took = false; ok = false;
                    printf("@@ S%d: gives the role back with a plain store\n", me) }
#else
           atomic {                                         /* SC:244 CAS(expected: delivering, desired: 0) */
             ok = false;
             if
             :: word == DELIVERING -> word = 0; giveRole(); took = false;
                printf("@@ S%d: gives the role back (CAS)\n", me)
             :: else -> took = true;                        /* SC:245: drain */
                printf("@@ S%d: give-back CAS fails (word %d): drains\n", me, word)
             fi
           }
#endif
        :: else ->                                          /* SC:228-229, the slow path */
           atomic { lock(); sendWithLockHeld(K_VALUE, me, n); if :: took -> deliverValue(me, n) :: else fi }
        fi
     :: w != 0 && w != UNOBSERVED ->                        /* SC:228-229, the slow path */
        atomic { lock(); sendWithLockHeld(K_VALUE, me, n); if :: took -> deliverValue(me, n) :: else fi }
     fi;
     if :: took -> took = false; drain() :: else fi        /* SC:245, SC:305 */
     w = 0;
     n++
  :: else -> break
  od;
  finishedProcs++
}

proctype ObserverA() {
  byte w, kind, arg, t, u, closing, notified;
  bool ok, took;
  observe(0);                                               /* and stays */
  finishedProcs++
}

proctype ObserverB() {
  byte w, kind, arg, t, u, closing, notified;
  bool ok, took;
  observe(1);
  observedB = true;
  removeObserver(1);                                        /* its disposable, SC:442 */
  finishedProcs++
}

proctype Ender() {
  byte w, kind, arg, t, u, closing, notified;
  bool ok, took;
#if SCENARIO == 2
  atomic { lock(); sendWithLockHeld(K_TERMINAL, 0, 0) }    /* send(.completed): SC:228-229 */
  if :: took -> took = false; deliverTerminal(); drain() :: else fi
#else
  observedB;                                                /* the handle outlives its observe calls */
  atomic {
    lock(); isHandleReleased = true;                        /* handleReleased SC:517-521 */
    if                                                      /* endIfUnreachableWithLockHeld SC:526-531 */
    :: observerCount == 0 && (word & CLOSED) == 0 -> sendWithLockHeld(K_TERMINAL, 0, 0)
    :: else -> took = false; unlock()
    fi
  }
  if :: took -> took = false; deliverTerminal(); drain() :: else fi
#endif
  finishedProcs++
}

init {
  byte i, procs = THREADS;
  atomic {
    i = 0;
    do :: i < THREADS -> run Sender(i); i++ :: else -> break od;
#if SCENARIO != 3
    run ObserverA(); procs++;
#endif
#if SCENARIO != 2
    run ObserverB(); procs++;
#endif
#if SCENARIO != 1
    run Ender(); procs++;
#endif
  }
  finishedProcs == procs;
  /* Every process has finished: nothing is left queued or held, and A heard all it must. */
  assert(empty(pending) && pendingRemovals == 0);
  assert((word & (DELIVERING | PENDING)) == 0 && roleOwner == NOBODY && lockOwner == 0);
  assert((word & CLOSED) == 0 || terminal);
  assert((word & CLOSED) != 0 || (((word & UNOBSERVED) != 0) == (observers == 0)));
#if SCENARIO == 3
  assert((word & CLOSED) != 0);                             /* unreachable: it was interrupted */
#else
  if
  :: attachedA ->
     i = 0;
     do
     :: i < THREADS -> assert(heard[i] == lin[i]); i++      /* every value after A's attachment */
     :: else -> break
     od;
     assert(heardTerm[0] == ((word & CLOSED) != 0))          /* then the terminal event, iff sent */
  :: else -> assert(heardTerm[0] && (word & CLOSED) != 0)    /* A observed after the end */
  fi
#endif
}
