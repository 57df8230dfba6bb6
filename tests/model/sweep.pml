/*
 * The sweep of lib/src/sweep.cpp and lib/src/sweep_apply.cpp, model-checked with SPIN
 * (README.md), under the owner rule provably_dead (lib/src/step_rules.cpp).
 *
 * Two step keys of one node: step 0 is a step (a sweep ends it: rewritten as failed),
 * step 1 a pulled ask (a sweep deletes it, left to its stream's redelivery). The
 * node's module processes own them: process 1 starts step 0 and process 2 step 1; a
 * process renews its running step (rewrites it), finishes it (succeeded), or crashes;
 * a process restarting the work of a crashed one (process 3, or the other live one)
 * takes a step over (writes it running under its own owner token), as a redelivered
 * ask is started again after a delete. Two sweepers (a module's end_stale_at_start and
 * a command's sweep) each sweep up to ROUNDS times (end_stale_at_start tries again
 * after a failure): scan every key (Store::scan: each key's value and revision, read
 * key by key, the keys at different instants), plan each (judge_step: a running step
 * of an owner judge_owner_token proves gone is ended or deleted; an owner alive, or
 * one whose state cannot be read, is left), and send each end or delete through the
 * pipeline (WritePipeline::update / remove at the revision read). A write in flight
 * lands whenever the store gets to it, in any order, or never; its answer may be lost
 * (unknown): nothing is sent again blindly, and a write whose answer was lost may land
 * even after the sweeper's next round has read the key again.
 *
 * The store is linearizable: each key has a revision that grows with every write, and
 * a write naming a revision lands only while the key is still at it (Store's contract,
 * NATS's expected last subject sequence, etcd's mod_revision compare).
 *
 * Owner tokens are never reused: a process's token names its boot, pid and start, so a
 * process judged dead stays dead (judge_owner_token: dead, recycled, other boot) and a
 * restart writes another token.
 *
 * Variant:
 *   MUTANT_SWEEP_BLIND  a sweep's end or delete lands without its revision compare.
 *
 * Properties (assertions, checked as a sweeper's write lands; each named in a comment):
 *   live       a step whose owner is alive at the write is never ended or deleted;
 *   once       an end or delete lands only on a running step (never on a step that
 *              was ended, finished or deleted since it was read): nothing is ended twice;
 *   revision   every write lands at the revision its sweeper read, or not at all.
 */

#ifndef CRASHES
#define CRASHES 3     /* every process may crash */
#endif
#ifndef ROUNDS
#define ROUNDS 2      /* sweeps per sweeper: 1 or 2 (two write slots a key) */
#endif
#ifndef RENEWALS
#define RENEWALS 1    /* renewals per step and owner */
#endif

#define NONE      0   /* the key holds no value */
#define RUNNING   1
#define FINISHED  2   /* succeeded: its owner ended it */
#define FAILED    3   /* a sweep ended it */

/* The store: two keys. Its revisions never repeat and only grow, so a write naming
 * the revision read lands iff the key has not changed since the read: the model keeps
 * that fact for each write in flight, not the numbers. */
byte state[2];        /* NONE, RUNNING, FINISHED, FAILED */
byte owner[2];        /* the process that wrote it running: 1..3; 0 none */

/* The node's processes 1..3 (index 0 unused): alive, and how many have crashed. */
bool alive[4];
byte crashes = 0;
byte restarted = 0;   /* process 3 has started */

/* Each sweeper's writes in flight: flight[s * 4 + k * 2 + r] for the write of sweeper
 * s for key k sent in round r: NO_WRITE, or AT_READ (the key has not changed since the
 * read whose revision the write names), or SENT (it has: the write can only be
 * refused, which changes nothing, so the model drops it at once, unless the mutant
 * lets it land anyway). */
#define NO_WRITE 0
#define SENT     1
#define AT_READ  2
byte flight[8];
#define slot(s, k, r) flight[(s) * 4 + (k) * 2 + (r)]
#ifdef MUTANT_SWEEP_BLIND
#define STALE SENT
#else
#define STALE NO_WRITE
#endif

/* Key k changed: no write in flight names its revision any more. */
inline key_changed(k) {
  if
  :: flight[k * 2] == AT_READ -> flight[k * 2] = STALE
  :: else -> skip
  fi;
  if
  :: flight[k * 2 + 1] == AT_READ -> flight[k * 2 + 1] = STALE
  :: else -> skip
  fi;
  if
  :: flight[4 + k * 2] == AT_READ -> flight[4 + k * 2] = STALE
  :: else -> skip
  fi;
  if
  :: flight[4 + k * 2 + 1] == AT_READ -> flight[4 + k * 2 + 1] = STALE
  :: else -> skip
  fi
}

/* The write of sweeper s for key k, sent in round r, reaches the store: it lands at the
 * revision it names, or finds the key changed. */
inline land(s, k, r) {
  atomic {
    if
#ifdef MUTANT_SWEEP_BLIND
    :: state[k] != NONE ->
#else
    :: slot(s, k, r) == AT_READ ->
#endif
       printf("sweeper %d's write of round %d lands on step %d (owner: process %d)\n", s, r, k, owner[k]);
       assert(!alive[owner[k]]);         /* live */
       assert(state[k] == RUNNING);      /* once */
       assert(slot(s, k, r) == AT_READ); /* revision */
       if
       :: k == 0 -> state[k] = FAILED    /* StepCodec::end: rewritten as failed */
       :: k == 1 -> state[k] = NONE; owner[k] = 0  /* deleted */
       fi;
       key_changed(k)
    :: else ->                           /* changed: the key moved since it was read */
       printf("sweeper %d's write of round %d on step %d refused: changed\n", s, r, k)
    fi;
    slot(s, k, r) = NO_WRITE
  }
}

/* One write of the owner's (start, renew, finish, take over): the owners' writes are
 * theirs, not the sweep's: the model lets them land unconditionally (the worst case
 * for a sweep). */
inline owner_write(k, st, o) {
  state[k] = st; owner[k] = o; key_changed(k)
}

/* The steps' owners: each step is started once by its process, renewed, finished, or
 * left running by a crash and then taken over by a live process. */
proctype Step(byte k) {
  byte renewals = 0;
  byte took_over = 0;
  atomic {                         /* process 1 runs step 0, process 2 step 1 */
    owner_write(k, RUNNING, k + 1); printf("process %d starts step %d\n", k + 1, k)
  };
end_step:
  do
  :: atomic {                      /* the owner rewrites its running step */
       state[k] == RUNNING && alive[owner[k]] && renewals < RENEWALS ->
       renewals++; owner_write(k, RUNNING, owner[k]);
       printf("process %d rewrites step %d\n", owner[k], k)
     }
  :: atomic {                      /* the owner finishes it */
       state[k] == RUNNING && alive[owner[k]] ->
       owner_write(k, FINISHED, owner[k]); printf("process %d finishes step %d\n", owner[k], k)
     }
  :: atomic {                      /* a live process restarts the step: takes it over, or
                                    * starts a redelivered ask again */
       took_over == 0 && (alive[1] || alive[2] || alive[3] || restarted == 0) &&
       (state[k] == NONE || state[k] == FAILED || (state[k] == RUNNING && !alive[owner[k]])) ->
       took_over = 1;
       if
       :: alive[1] -> owner_write(k, RUNNING, 1)
       :: alive[2] -> owner_write(k, RUNNING, 2)
       :: restarted == 0 -> restarted = 1; alive[3] = true; owner_write(k, RUNNING, 3)
       :: alive[3] -> owner_write(k, RUNNING, 3)
       fi;
       printf("process %d restarts step %d\n", owner[k], k)
     }
  od
}

/* Crashes: a process dies for good (its token never comes back). */
active proctype Crash() {
end_crash:
  do
  :: atomic { crashes < CRASHES && alive[1] -> crashes++; alive[1] = false; printf("process 1 crashes\n") }
  :: atomic { crashes < CRASHES && alive[2] -> crashes++; alive[2] = false; printf("process 2 crashes\n") }
  :: atomic { crashes < CRASHES && alive[3] -> crashes++; alive[3] = false; printf("process 3 crashes\n") }
  od
}

/* The store applies the writes in flight whenever it gets to them, in any order. A
 * write it never gets to is one lost on its way (its sweeper learns "unknown"); a
 * write that landed but whose answer was lost is, to everyone but its sweeper, one
 * that landed: the sweeper only stops sending (fewer writes, which a sweeper that
 * plans nothing more already gives), never sends it again. */
active proctype Store() {
end_store:
  do
  :: flight[0] != NO_WRITE -> land(0, 0, 0)
  :: flight[1] != NO_WRITE -> land(0, 0, 1)
  :: flight[2] != NO_WRITE -> land(0, 1, 0)
  :: flight[3] != NO_WRITE -> land(0, 1, 1)
  :: flight[4] != NO_WRITE -> land(1, 0, 0)
  :: flight[5] != NO_WRITE -> land(1, 0, 1)
  :: flight[6] != NO_WRITE -> land(1, 1, 0)
  :: flight[7] != NO_WRITE -> land(1, 1, 1)
  od
}

/* One key of a round of sweeper s: Store::scan reads key k's value and revision;
 * BatchSweep plans it (judge_step under provably_dead, judge_owner_token now) and
 * SweepApplier sends its end or delete at once (update or remove at the revision
 * read). A running step whose owner is proven gone is planned; an owner alive is left,
 * and so is one whose state cannot be read (owner_unknown), which a dead one may be.
 * The instants of read, judgement and send are one here: a read earlier than the
 * judgement only names an older revision, so its write finds the key changed where
 * this one would find it unchanged or planned nothing. */
inline sweep_key(s, k, r) {
  atomic {
    if
    :: state[k] == RUNNING && !alive[owner[k]] ->  /* owner_gone */
       slot(s, k, r) = AT_READ;
       printf("sweeper %d reads step %d (round %d): its owner, process %d, is gone: sends its end (a delete for the ask) at the revision read\n",
              s, k, r, owner[k])
    :: state[k] == RUNNING && !alive[owner[k]] -> skip  /* owner_unknown */
    :: else -> skip                /* owner_alive, not_running, no_value */
    fi
  }
}

/* end_stale (sweep.cpp), ROUNDS times (end_stale_at_start tries again). */
proctype Sweeper(byte s) {
  sweep_key(s, 0, 0);
  sweep_key(s, 1, 0);
#if ROUNDS > 1
  sweep_key(s, 0, 1);
  sweep_key(s, 1, 1)
#endif
}

init {
  atomic {
    alive[1] = true; alive[2] = true;
    run Step(0); run Step(1);
    run Sweeper(0); run Sweeper(1)
  }
}
