/*
 * EffectGraph.pml: the unretained graph of effect records (.latest tree, tracked list, a key's
 * running and waiting effects) and who keeps each record alive.
 *
 * Line numbers at commit c37bd09: ESM = Sources/Automaton/EngineStateMachine.swift,
 * ER = Sources/Automaton/EffectRecord.swift, AE = Sources/Automaton/AutomatonEngine.swift,
 * AT = Sources/AutomatonTesting/AutomatonTester.swift, LT = Sources/Signals/Lifetime.swift.
 *
 * Every change to the graph happens under the engine's lock or in the processing role, so
 * concurrency reduces to the interleaving of whole operations: each operation below is one atomic
 * step. THREADS processes each perform INPUTS operations, chosen freely among:
 *   - send an input, from outside or as if from a tracked effect (AT:75 -> AE:479-482 ->
 *     ESM:451-472): it is dropped, or queued (an input from an effect holds its record);
 *   - process the next queued input (drain AE:170-186, commit AE:245-319 -> commitSuccess
 *     ESM:502-606, strategy .latest): its mapping starts an effect of the tree, or a keyed effect
 *     (key K, policy .queue), or is a `.cancel(K)` row;
 *   - an effect ends by itself (ER:158 -> AE:487-524 -> ESM:814-841), starting the next waiting one;
 *   - an effect's observer is released before it ends (ER:177-180, LT:126-135);
 *   - the automaton terminates (ESM:908-944).
 * Records are slots 1..N (never reused: a freed slot stays freed). A record is alive while someone
 * holds it (TrackedEffects' list, ER:183-197): its running effect's observer (`obs`), itself once
 * its observer was released unended (`selfKeep`), its queued inputs, its WaitingEffect entry
 * (`waitEntry`); frames and CancelledEffects hold records only within an operation. After each
 * operation a record nobody holds is freed, and the invariants are checked:
 *   - no link (parent, latestChild, rootLatest, the key's running list, the tracked list, a queued
 *     input's origin) leads to a freed record;
 *   - a link only ever leads to a tracked record, and a tracked record is alive (ER:68-73).
 *
 * -DDEFECT=1: a41e6c0 undone: send(_:from:) accepts an input "as if from" an effect that waits for
 * its key (ESM:461 without `!origin.isWaiting`).
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef INPUTS
#define INPUTS 4
#endif
#ifndef DEFECT
#define DEFECT 0
#endif
#ifndef N
#define N 4                           /* record slots */
#endif
#define QCAP 2

#define TREE 1                        /* the mapping returns an effect of the tree */
#define QKEY 2                        /* ... a keyed effect, key K, policy .queue */
#define CANCELK 3                     /* ... a .cancel(K) row */
#define FREE 0                        /* slot state: never allocated */
#define LIVE 1
#define FREED 2

byte slot[N + 1];                     /* FREE, LIVE or FREED */
bool tracked[N + 1];                  /* isTracked ER:61 (member of the tracked list ER:82-84) */
bool finished[N + 1];                 /* hasFinished ER:63 */
bool waiting[N + 1];                  /* isWaiting ER:65 */
bool inGroup[N + 1];                  /* in K's running list (groupLink, previousOfKey/nextOfKey ER:86-91) */
bool running[N + 1];                  /* its effect runs: started, lifetime not ended */
bool obs[N + 1];                      /* its effect holds its observer (which holds the record) */
bool selfKeep[N + 1];                 /* keepAliveUntilEnded LT:126-135 */
bool waitEntry[N + 1];                /* a WaitingEffect in K's group holds it (ESM:94-104) */
byte pendingInputs[N + 1];            /* ER:67: its inputs queued */
byte parent[N + 1];                   /* parentLink ER:78 */
byte latestChild[N + 1];              /* latestChildLink ER:81 */
byte rootLatest = 0;                  /* rootLatestLink ESM:367 */
byte nextId = 1;                      /* the next record slot (nextEffectID ESM:377) */
bool terminated = false;
chan queue = [QCAP] of { byte, byte };    /* ESM:359: (kind, origin) */
byte cancelled = 0;                   /* (scratch) records cancelled by this operation, as bits */
byte j, c, cn;                        /* (scratch) always 0 between operations */

#define TRACKED_OR_NONE(x) ((x) == 0 || tracked[x])
#define NOT_FREED(x) ((x) == 0 || slot[x] != FREED)

/* TrackedEffects.remove ER:227-237: unlink and clear its links */
inline untrack(r) { tracked[r] = false; parent[r] = 0; latestChild[r] = 0 }

/* cancelChain ESM:754-766: forgets `first` and its chain of latest children, collecting the running */
inline cancelChainFrom(first) {
  c = first;
  do
  :: c != 0 && tracked[c] ->
     if :: !finished[c] -> cancelled = cancelled | (1 << c) :: else fi;
     cn = latestChild[c]; untrack(c); c = cn
  :: else -> break
  od;
  c = 0; cn = 0
}

/* cancel(_:into:byCancelRow:) ESM:722-748, for K's group */
inline cancelGroup() {
  j = 1;
  do
  :: j <= N ->
     if
     :: inGroup[j] -> inGroup[j] = false;                 /* ESM:729-736 */
        printf("@@   cancel(K): running r%d and its chain\n", j); cancelChainFrom(j)
     :: else
     fi;
     if
     :: waitEntry[j] ->                                   /* ESM:737-747 */
        if :: tracked[j] -> untrack(j); cancelled = cancelled | (1 << j) :: else fi;
        printf("@@   cancel(K): waiting r%d forgotten, its entry let go\n", j);
        waiting[j] = false; waitEntry[j] = false          /* kept, released after the lock */
     :: else
     fi;
     j++
  :: else -> break
  od;
  j = 0
}
/* forgetIfFinished ESM:787-800 */
inline forgetIfFinished(r) {
  if
  :: tracked[r] && finished[r] && pendingInputs[r] == 0 ->
     if :: latestChild[r] != 0 -> parent[latestChild[r]] = parent[r] :: else fi;   /* ESM:791-793 */
     if
     :: parent[r] != 0 -> if :: latestChild[parent[r]] == r -> latestChild[parent[r]] = latestChild[r] :: else fi
     :: parent[r] == 0 && rootLatest == r -> rootLatest = latestChild[r]
     :: else
     fi;
     untrack(r)
  :: else
  fi
}

/* Lifetimes of cancelled effects end after the lock (AE:291-295, AE:614-618): their runs are
   disposed and let go of their observers; a record that kept itself alive lets go (LT:113-117). */
inline endCancelledLifetimes() {
  j = 1;
  do
  :: j <= N -> if :: cancelled & (1 << j) -> running[j] = false; obs[j] = false; selfKeep[j] = false :: else fi; j++
  :: else -> break
  od;
  j = 0; cancelled = 0
}

/* commit AE:245-319 with commitSuccess ESM:502-606, for a queued (kind, origin) */
inline commit(kind, e) {
  /* the defer ESM:520-524 runs last; .latest: replace what this level started (ESM:527-535) */
  if :: e != 0 -> k = (tracked[e] -> latestChild[e] : 0) :: else -> k = rootLatest fi;
  if
  :: k != 0 -> cancelChainFrom(k); if :: e != 0 -> latestChild[e] = 0 :: else -> rootLatest = 0 fi
  :: else
  fi;
  if :: kind == CANCELK -> cancelGroup() :: else fi;       /* ESM:536-544 */
  r = 0;
  if
  :: (kind == TREE || kind == QKEY) && nextId <= N ->
     r = nextId; nextId++; slot[r] = LIVE;                 /* EffectRecord(engine:effect:) AE:259 */
     if
     :: kind == QKEY ->                                    /* ESM:555-575 */
        j = 1; ok = true;
        do :: j <= N -> ok = ok && !inGroup[j] && !waitEntry[j]; j++ :: else -> break od; j = 0;
        if
        :: ok -> tracked[r] = true; inGroup[r] = true; running[r] = true; obs[r] = true;  /* startKeyed, start */
           printf("@@   r%d: keyed, runs\n", r)
        :: else -> tracked[r] = true; waiting[r] = true; waitEntry[r] = true;           /* .wait */
           printf("@@   r%d: keyed, waits for K\n", r)
        fi;
        k = 0                                              /* not a tree child */
     :: kind == TREE ->                                    /* ESM:580-586 */
        if :: e != 0 && tracked[e] -> parent[r] = e :: else fi;
        tracked[r] = true; running[r] = true; obs[r] = true;   /* started after the reply, AE:303-309 */
        printf("@@   r%d: effect of the tree, parent r%d\n", r, parent[r]);
        k = r
     fi
  :: else -> k = 0
  fi;
  if                                                       /* ESM:590-596 */
  :: e != 0 -> if :: tracked[e] -> latestChild[e] = k :: else fi
  :: else -> rootLatest = k
  fi;
  k = 0; r = 0; ok = false;
  if                                                       /* inputProcessed(from:) ESM:770-779 */
  :: e != 0 && tracked[e] -> pendingInputs[e]--; forgetIfFinished(e)
  :: else
  fi;
  endCancelledLifetimes()
}

/* effectEnded ESM:814-841 then AE:517-522 */
inline effectEnded(r) {
  if
  :: tracked[r] && !finished[r] && !waiting[r] ->
     finished[r] = true;
     if
     :: inGroup[r] ->
        inGroup[r] = false;                                /* removeRunning ESM:158-173 */
        j = 1; k = 0;
        do :: j <= N -> if :: inGroup[j] -> k = 255 :: else fi; j++ :: else -> break od;
        if
        :: k == 0 ->                                       /* the first waiting one starts (FIFO = id order) */
           j = 1;
           do
           :: j <= N && waitEntry[j] -> k = j; break
           :: j <= N && !waitEntry[j] -> j++
           :: j > N -> break
           od;
           if
           :: k != 0 -> inGroup[k] = true; waiting[k] = false;   /* ESM:829-836 */
              running[k] = true; obs[k] = true;            /* start(next.record) AE:521: not cancelled */
              waitEntry[k] = false                         /* the WaitingEffect is let go */
           :: else
           fi
        :: else
        fi;
        j = 0; k = 0
     :: else
     fi;
     forgetIfFinished(r)
  :: else
  fi;
  running[r] = false; obs[r] = false; selfKeep[r] = false  /* its lifetime ends; the run lets go */
}

/* terminate ESM:908-944 (performed at once: nobody else holds the role between operations) */
inline terminate() {
  terminated = true;
  do :: queue?k,r -> if :: r != 0 -> pendingInputs[r]-- :: else fi :: empty(queue) -> break od;   /* ESM:915-916 */
  k = 0; r = 0;
  j = 1;
  do
  :: j <= N ->
     if :: tracked[j] -> if :: !finished[j] -> cancelled = cancelled | (1 << j) :: else fi; untrack(j) :: else fi;
     inGroup[j] = false; waiting[j] = false; waitEntry[j] = false;   /* ESM:918-933 */
     j++
  :: else -> break
  od;
  j = 0; rootLatest = 0;                                   /* ESM:936 */
  endCancelledLifetimes()                                  /* AE:593 / AE:601 */
}

/* Free what nobody holds, then check the graph. */
inline collectAndCheck() {
  j = 1;
  do
  :: j <= N ->
     if
     :: slot[j] == LIVE && !obs[j] && !selfKeep[j] && !waitEntry[j] && pendingInputs[j] == 0 -> slot[j] = FREED;
        printf("@@   r%d freed (tracked: %d)\n", j, tracked[j])
     :: else
     fi;
     j++
  :: else -> break
  od;
  assert(NOT_FREED(rootLatest));
  j = 1;
  do
  :: j <= N ->
     if
     :: slot[j] != FREED ->                                /* no link of a live record leads to a freed one */
        assert(NOT_FREED(parent[j]) && NOT_FREED(latestChild[j]))
     :: else
     fi;
     assert(!tracked[j] || slot[j] == LIVE);               /* a tracked record is alive */
     assert(!tracked[j] || (TRACKED_OR_NONE(parent[j]) && TRACKED_OR_NONE(latestChild[j])));
     assert(!inGroup[j] || tracked[j]);                    /* K's running list holds tracked records */
     assert(!waiting[j] || (tracked[j] && waitEntry[j]));
     j++
  :: else -> break
  od;
  assert(TRACKED_OR_NONE(rootLatest));
  j = 0
}

proctype Actor() {
  byte n = 0, kind, e, k, r;
  bool ok;
  do
  :: n < INPUTS ->
     atomic {
       if
       :: !terminated && nfull(queue) ->                   /* an outside input (AE:153) */
          if :: kind = TREE :: kind = QKEY :: kind = CANCELK fi;
          queue!kind,0;
          printf("@@ outside input queued (mapping: %d; 1 tree effect, 2 keyed .queue, 3 .cancel(K))\n", kind)
       :: !terminated && nfull(queue) ->                   /* as if from effect e (AT:75, AE:479-482) */
          if :: e = 1 :: e = 2 :: e = 3 :: e = 4 fi;
          if
          :: e <= N && tracked[e] ->                       /* tracked.record(withID:) ER:240-249 */
#if DEFECT == 1
             if :: !finished[e] ->                         /* ESM:461 without !origin.isWaiting */
#else
             if :: !finished[e] && !waiting[e] ->          /* ESM:461 */
#endif
                   pendingInputs[e]++; queue!TREE,e;       /* ESM:462, 468 */
                   printf("@@ input as if from r%d queued (r%d waiting: %d)\n", e, e, waiting[e])
                :: else                                    /* dropped */
             fi
          :: else
          fi;
          e = 0
       :: nempty(queue) ->                                 /* the role holder processes the next one */
          queue?kind,e;
          if
          :: e != 0 && !tracked[e] -> pendingInputs[e]--   /* .discard ESM:482 */
          :: else -> printf("@@ processes an input (mapping %d, origin r%d)\n", kind, e); commit(kind, e)
          fi;
          kind = 0; e = 0
       :: true ->                                          /* an effect ends by itself */
          if :: e = 1 :: e = 2 :: e = 3 :: e = 4 fi;
          if :: e <= N && running[e] -> printf("@@ r%d's effect ends\n", e); effectEnded(e) :: else fi;
          e = 0
       :: true ->                                          /* an effect lets go of its observer unended */
          if :: e = 1 :: e = 2 :: e = 3 :: e = 4 fi;
          if
          :: e <= N && running[e] && obs[e] -> obs[e] = false; selfKeep[e] = true;   /* ER:177-180 */
             printf("@@ r%d's observer released unended\n", e)
          :: else
          fi;
          e = 0
       :: !terminated -> printf("@@ terminates\n"); terminate()
       fi;
       collectAndCheck();
       n++
     }
  :: else -> break
  od
}

init {
  atomic {
    j = 0;
    do :: j < THREADS -> run Actor(); j++ :: else -> break od;
    j = 0
  }
}
