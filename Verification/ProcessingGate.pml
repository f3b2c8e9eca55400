/*
 * ProcessingGate.pml: the automaton engine's processing role and its terminations
 * (Sources/Automaton/AutomatonEngine.swift = AE, Sources/Automaton/EngineStateMachine.swift = ESM,
 * line numbers at commit c37bd09).
 *
 * Processes:
 *   Sender(s), s < THREADS: sends outside inputs 1..INPUTS with AutomatonEngine.send(_:from: nil)
 *     (AE:153). Input 2 of each sender needs the machine (commit, AE:238 -> commitSuccess, ESM:502,
 *     which aborts once terminated); the others change nothing shared (process's lock-free path,
 *     AE:231-236). (A fixed choice: a free one doubles the states per input.)
 *   InputEnd: the input signal completes (inputCompleted, AE:544) or is interrupted
 *     (inputInterrupted, AE:552), at any moment.
 *   Releaser: the automaton is released (release(endingAfterwards:), AE:560), at any moment.
 * Effects are not modelled here (runningEffects stays 0; see HeldInput.pml and EffectGraph.pml).
 *
 * Steps: the lock-free CAS that takes the role (AE:154) and the one that gives it back (AE:157) are
 * one step each; a critical section of the engine's lock (machine.withCriticalRegion) is one step:
 * inside, the gate word is changed by load+CAS loops whose failure only retries (takeWordBit,
 * setWordBits), or by stores of the role holder, which neither lock-free CAS can then change (one
 * expects 0, the other is the holder's own). Mapping, state and reply are ghost steps (AE:218-239),
 * see changeAndReply.
 *
 * -DDEFECT=1: the uncontended input gives the role back with a plain store (gate.storeWord(0))
 *   instead of compareExchangeWord(expected: processing, desired: 0) (AE:157): it no longer "comes
 *   here and finds this input" (ESM:465-466): what was queued meanwhile is stranded.
 * -DDEFECT=2: next() gives the role up with storeWord(0) whatever the phase (ESM:485-486 keeps it
 *   `blocked` unless the automaton is still active), so the fast path reopens after the end.
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

#define PROCESSING 1                  /* ProcessingGate, ESM:14-17 */
#define BLOCKED    2
#define ACTIVE 0                      /* Phase, ESM:322-329 */
#define INPUT_COMPLETED 1
#define TERMINATED 2
#define T_NONE 0                      /* Termination, ESM:71-77 */
#define T_INTERRUPTED 1
#define T_RELEASED 2
#define NOBODY 255

byte gate = 0;                        /* the gate word, AE:45 / ESM:361 */
byte mlock = 0;                       /* machine: Locked<EngineStateMachine>, AE:43 (its mutex) */
byte phase = ACTIVE;                  /* ESM:358 */
chan queue = [THREADS*INPUTS] of { byte, byte };   /* ESM:359 queue of PendingInput (sender, seq) */
byte pendingTermination = T_NONE;     /* ESM:370 */
bool hasPerformedTermination = false; /* ESM:372 */
bool lifetimeTokenKept = false;       /* ESM:376 lifetimeToken */

/* ghost state */
byte roleOwner = NOBODY;              /* the processing role's holder */
byte last[THREADS];                   /* last input processed from each sender: in order, once */
byte dropped[THREADS];                /* inputs dropped, each where the contract drops it (the end) */
bool repliesEnded = false, stateEnded = false;
bool lifetimeEnded = false;
bool released = false;
byte finishedProcs = 0;

inline lock()   { mlock == 0 -> mlock = _pid + 1 }
inline unlock() { assert(mlock == _pid + 1); mlock = 0 }
inline drop(s, n) {                                   /* never one already processed */
  assert((n) > last[s]); dropped[s]++; printf("@@ p%d: input S%d.%d dropped\n", _pid, s, n)
}
inline takeRole() { assert(roleOwner == NOBODY); roleOwner = _pid }    /* one thread processes */
inline giveRole() { assert(roleOwner == _pid); roleOwner = NOBODY }

/* Lock.takeWordBit(processing, orSet: blocked) (LK:190-199), load and CAS merged (failure retries) */
inline takeProcessingOrBlock() {
  if
  :: (gate & PROCESSING) != 0 -> gate = gate | BLOCKED; took = false
  :: else -> gate = gate | PROCESSING; took = true; takeRole()
  fi
}

/* process(_:) AE:218-239 for input (s, n), in the processing role. Input 2 of each sender needs the
   machine (commit AE:238-319, commitSuccess ESM:502-606); the others change nothing shared
   (AE:231-236). A state change and its reply (AE:233-235, AE:296-298) are one ghost step: only the
   role holder ends `replies` or starts processing meanwhile (inputCompleted's complete() runs when
   nobody holds the role and the fast path is blocked), so nothing another thread does can come
   between them; that step is merged into the step that gave the thread its input. */
inline changeAndReply(s, n) {
  assert(roleOwner == _pid);
  assert(!repliesEnded && !stateEnded);               /* no state change or reply after the end */
  assert(last[s] + 1 == (n)); last[s] = (n);          /* per sender in order, once */
  printf("@@ p%d: processes S%d.%d (state changes, reply sent)\n", _pid, s, n)
}
inline processFreeStep(s, n) { if :: (n) != 2 -> changeAndReply(s, n) :: else fi }
inline commitStep(s, n) {
  if
  :: (n) == 2 ->
     atomic {
       lock();
       if
       :: phase == TERMINATED -> drop(s, n)           /* .aborted ESM:525: not made, no reply */
       :: else -> changeAndReply(s, n)                /* committed, then AE:296-298 */
       fi;
       unlock()
     }
  :: else
  fi
}

/* Ends replies (complete() AE:528, or perform AE:587-605). */
inline endReplies() { repliesEnded = true; printf("@@ p%d: replies end\n", _pid) }

/* perform(_:cancelling:) AE:587-605 then finishTermination AE:580-582 / ESM:950-955 */
inline performTermination(termination) {
  assert(roleOwner == _pid);
  if
  :: termination == T_INTERRUPTED -> endReplies(); stateEnded = true   /* AE:593-598 */
  :: termination == T_RELEASED -> endReplies(); stateEnded = true      /* AE:600-603 */
  fi;
  atomic {
    lock();
    hasPerformedTermination = true;                   /* ESM:951 */
    giveRole(); gate = BLOCKED;                       /* ESM:952 */
    tokenToDispose = lifetimeTokenKept; lifetimeTokenKept = false;    /* ESM:953-954 */
    unlock()
  }
  if :: tokenToDispose -> tokenToDispose = false; d_step { assert(hasPerformedTermination); lifetimeEnded = true }
     :: else fi
}

/* drain() AE:170-186 with next() ESM:475-488 */
inline drain() {
  do
  :: atomic {
       lock();
       assert(roleOwner == _pid);
       if
       :: pendingTermination != T_NONE ->             /* ESM:476-479 */
          action = pendingTermination; pendingTermination = T_NONE; gate = BLOCKED
       :: pendingTermination == T_NONE && nempty(queue) -> queue?qs,qn; action = 10; /* ESM:481-483 */
          processFreeStep(qs, qn)
       :: pendingTermination == T_NONE && empty(queue) ->                         /* ESM:485-487 */
#if DEFECT == 2
          gate = 0; printf("@@ p%d: gives the role up with storeWord(0) (phase %d)\n", _pid, phase);
#else
          gate = (phase == ACTIVE -> 0 : BLOCKED);
#endif
          giveRole();
          action = (phase == INPUT_COMPLETED -> 11 : 12)   /* idle(completeReplies:), runningEffects == 0 */
       fi;
       unlock()
     }
     if
     :: action == 10 -> commitStep(qs, qn); qs = 0; qn = 0   /* AE:173-174 */
     :: action == 11 -> endReplies(); break           /* AE:177-179: complete() */
     :: action == 12 -> break
     :: action == T_INTERRUPTED || action == T_RELEASED ->
        performTermination(action); break             /* AE:180-183 */
     fi
  od;
  action = 0
}

/* terminate(_:) AE:571-575 with ESM:908-944 */
inline terminate(termination) {
  atomic {
    lock();
    if
    :: phase == TERMINATED -> took = false            /* ESM:909 */
    :: else ->
       phase = TERMINATED;                            /* ESM:910 */
       printf("@@ p%d: terminate(%d)\n", _pid, termination);
       gate = gate | BLOCKED;                         /* blockFastPath ESM:911, 897-899 */
       do                                             /* effects.keep(queue) ESM:915-916: dropped */
       :: queue?qs,qn -> drop(qs, qn)
       :: empty(queue) -> break
       od;
       qs = 0; qn = 0;
       takeProcessingOrBlock();                       /* ESM:939 */
       if :: !took -> pendingTermination = termination :: else fi   /* ESM:942 */
    fi;
    unlock()
  }
  if :: took -> took = false; performTermination(termination) :: else fi
}

proctype Sender(byte me) {
  byte n = 1, qs, qn, action;
  bool ok, took, tokenToDispose;
  do
  :: n <= INPUTS ->
     atomic {                                         /* AE:154 CAS(expected: 0, desired: processing) */
       if :: gate == 0 -> gate = PROCESSING; ok = true; takeRole();
             printf("@@ S%d.%d: takes the role (CAS 0 -> processing)\n", me, n); processFreeStep(me, n)   /* AE:156 */
          :: else -> ok = false
       fi
     }
     if
     :: ok ->
        ok = false;
        commitStep(me, n);                            /* AE:156 */
#if DEFECT == 1
        d_step { giveRole(); gate = 0; took = false;  /* DEFECT: a plain store */
                 printf("@@ S%d: gives the role back with a plain store\n", me) }
#else
        atomic {                                      /* AE:157 CAS(expected: processing, desired: 0) */
          if :: gate == PROCESSING -> gate = 0; giveRole(); took = false; printf("@@ S%d: gives the role back (CAS)\n", me)
             :: else -> took = true; printf("@@ S%d: give-back CAS fails (gate %d): drains\n", me, gate) fi
        }                                             /* AE:158: drain below */
#endif
     :: else ->
        atomic {                                      /* AE:162, ESM:451-472 */
          lock();
          if
          :: phase == TERMINATED || phase == INPUT_COMPLETED -> drop(me, n); took = false              /* ESM:452-454 .drop */
          :: else -> takeProcessingOrBlock();         /* ESM:467 */
             if :: !took -> queue!me,n; printf("@@ S%d.%d: queued, blocked set\n", me, n) :: else fi   /* ESM:468 */
          fi;
          unlock();
          if :: took -> processFreeStep(me, n) :: else fi   /* AE:164 */
        }
        if :: took -> commitStep(me, n) :: else fi    /* AE:164 */
     fi;
     if :: took -> took = false; drain() :: else fi  /* AE:158, AE:165 */
     n++
  :: else -> break
  od;
  finishedProcs++
}

proctype InputEnd() {
  byte qs, qn, action;
  bool ok, took, tokenToDispose;
  if
  :: atomic {                                         /* inputCompleted AE:544-548, ESM:888-893 */
       lock();
       if
       :: phase == ACTIVE -> phase = INPUT_COMPLETED; gate = gate | BLOCKED; printf("@@ input completed\n");
          ok = ((gate & PROCESSING) == 0 && empty(queue))   /* shouldCompleteReplies ESM:844-847 */
       :: else -> ok = false
       fi;
       unlock()
     }
     if :: ok -> ok = false; endReplies() :: else fi  /* complete() AE:528-531 */
  :: terminate(T_INTERRUPTED)                         /* inputInterrupted AE:552-554 */
  fi;
  finishedProcs++
}

proctype Releaser() {
  byte qs, qn, action;
  bool ok, took, tokenToDispose;
  if
  :: released = true;
     atomic {                                         /* release AE:560-566, keepUntilTerminated ESM:960-964 */
       lock();
       if :: hasPerformedTermination -> ok = true :: else -> lifetimeTokenKept = true; ok = false fi;
       unlock()
     }
     if
     :: ok -> ok = false; lifetimeEnded = true        /* AE:562: the interruption is done */
     :: else -> terminate(T_RELEASED)                 /* AE:565 */
     fi
  fi;
  finishedProcs++
}

init {
  byte i;
  atomic {
    i = 0;
    do :: i < THREADS -> run Sender(i); i++ :: else -> break od;
    run InputEnd(); run Releaser()
  }
  finishedProcs == THREADS + 2;
  /* Everything has finished. */
  assert(roleOwner == NOBODY && mlock == 0 && (gate & PROCESSING) == 0);
  assert(empty(queue) && pendingTermination == T_NONE);
  i = 0;
  do
  :: i < THREADS -> assert(last[i] + dropped[i] == INPUTS); i++   /* processed, or dropped as allowed */
  :: else -> break
  od;
  if
  :: phase == TERMINATED -> assert(hasPerformedTermination && repliesEnded && stateEnded)
  :: phase == INPUT_COMPLETED -> assert(repliesEnded)  /* replies complete once inputs are done */
  :: phase == ACTIVE -> assert(!repliesEnded && gate == 0)
  fi;
  assert(lifetimeEnded == released)                   /* the released automaton's lifetime ends */
}
