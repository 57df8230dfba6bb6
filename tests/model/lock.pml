/*
 * The lock protocol of lib/src/lock_life.cpp, model-checked with SPIN (README.md).
 *
 * Three holders take one lock key on a linearizable compare-and-swap store
 * (lib/include/leasejudge/store.hpp): acquire (create; when the key holds a body,
 * read it, judge it, break it at the revision read, create again), hold it with a
 * heartbeat (LockRenewal::run: renew at the revision last seen; after a renewal found
 * the key moved, adopt a body of our own acquisition id, which a renewal whose answer
 * was lost may have written), release it (or lose it, and then release it while its
 * body is still ours, as lock run does).
 *
 * Nondeterminism:
 *   - pauses: any holder may stop for any number of ticks before any step (SPIN tries
 *     every interleaving with Time, unfairly: a pause of any length, also forever);
 *   - crashes (at most CRASHES): a holder stops for good and its belief with it; a
 *     judge on its machine then finds its process gone. A write the holder had in
 *     flight lands before the crash or never: landing after it would only make a
 *     judge's remove at the older revision fail (changed) before the next judge
 *     removes the same body, as a judge that read later does;
 *   - lost answers (at most LOST): a renewal (or etcd keep-alive) is lost on its way,
 *     or lands and its answer is lost: "unknown" (Errc::unknown_outcome); the
 *     heartbeat tries again at the revision last seen, never blindly. A create, break
 *     or release whose outcome is unknown ends the holder's part (an error, never
 *     tried again): what a holder does that pauses forever right before the write (it
 *     did not land) or right after it (it did), which the model already has;
 *   - lease expiry: time passes in ticks (Time); every count below runs down with it.
 *
 * Time. A tick is a LEASE-th of a lease. A holder's heartbeat keeps its own count
 * (hb_left: LockRenewal::lease_end_ns_, on the steady clock): the holder holds the
 * lock by its own count, it believes it holds (LockRenewal::expired() is false),
 * while hb_left > 0. A body written from a clock reading carries leaseUntil = reading
 * + lease + lease_skew_ms (lock_body.cpp); a judge whose clock runs ahead of the
 * writer's by no more than the documented margin (lease_skew_ms) finds that lease
 * ended no earlier than SKEW_ROOM ticks after reading + lease: body_left counts down
 * to that moment, and the model's judge breaks as soon as it is 0, the earliest any
 * judge inside the margin may (SKEW_ROOM 0: a judge exactly at the margin; a judge
 * with more room breaks later, which a judge that pauses already does). The judge
 * reads the entry and its evidence at one instant, the instant its create was
 * refused; the code's judge reads its clock earlier (acquire_lock's now), so the
 * model's judge breaks no later than the code's.
 *
 * The store's revisions never repeat and only grow (etcd's mod_revision, a JetStream
 * stream sequence): a write naming a revision lands iff the key has not changed since
 * that revision was read. The model keeps that fact (mine, seen), not the numbers.
 *
 * Variants (spin -a -D...):
 *   ETCD     the key is bound to a store lease of its holder's (etcd): the store counts
 *            its TTL (sl_left) from the grant and from each keep-alive, and ends it,
 *            deleting the key with it, any time after the TTL ran out; a judge breaks
 *            on the store's word that the lease ended (no remove: the key went with
 *            it) or on a process proven gone (remove at the revision read); a body
 *            whose lease ended by the judge's clock is held while the store lease runs.
 *   MUTANT_HEARTBEAT_OWN_START  the heartbeat counts its first lease from its own
 *            start (LockRenewal's constructor) instead of from the acquisition's
 *            (HeldLock::lease_from_ns, taken before the grant and the create): the
 *            defect this model found in an earlier version of the code (README.md).
 *   MUTANT_BREAK_BLIND     acquire_lock's break removes the key without its revision
 *            compare.
 *   MUTANT_RENEW_BLIND     renew_lock's update lands without its revision compare
 *            (on ETCD it finds nothing: README.md).
 *   MUTANT_ADOPT_ANY       LockRenewal::adopt_own_body adopts any body, not only one of
 *            our acquisition id (it finds nothing: README.md).
 *
 * Properties (assertions, each named in a comment on its line):
 *   exclusion  never two holders that both hold the lock by their own count at once
 *              (no fencing needed): checked wherever a count starts or is extended,
 *              the only steps that make a holder believe it holds;
 *   tokens     an acquisition lands (a new fencing token, a revision larger than
 *              every earlier one, is issued) only while no holder holds the lock by
 *              its own count: the holder that believes it holds carries the newest
 *              token, and a write carrying an older one can only come from a holder
 *              that no longer does (a writer paused since). A resource that keeps the
 *              largest token it accepted refuses such a write once it accepted a newer
 *              token's: no write with an older token is accepted after a newer one,
 *              since tokens grow with the acquisitions (the store's revisions only
 *              grow). That last step is the resource's rule and the store's, not the
 *              protocol's: the model does not repeat it;
 *   once       a remove (a break, or a release) takes away the lock it judged (or its
 *              holder's own), never another acquisition's: a lock once released or
 *              broken is never broken again.
 */

#ifndef LEASE
#define LEASE 2      /* ticks */
#endif
#ifndef SKEW_ROOM
#define SKEW_ROOM 0  /* ticks a judge's clock stays inside the skew margin */
#endif
#ifndef CRASHES
#define CRASHES 3    /* every holder may crash */
#endif
#ifndef LOST
#define LOST 3
#endif

mtype = { OK, EXISTS, CHANGED, FAILED };

/* The store: one key. mine[h]: the revision holder h holds (HeldLock::revision) is
 * still the key's; seen[h]: the revision h judged (to break) or read (to release) is.
 * Every change of the key clears them all. */
bool key_held = false;  /* the key holds a body */
byte key_id = 0;        /* the body's acquisition id: its holder + 1 */
byte body_left = 0;     /* ticks until a judge may find the body's lease ended */
byte key_lease = 0;     /* ETCD: the store lease the key is bound to: holder + 1; 0 none */
bool mine[3], seen[3];

/* ETCD: each holder's store lease (one at a time: a new grant replaces an unbound one). */
bool sl_live[3];
byte sl_left[3];        /* ticks until its TTL runs out without a keep-alive */

/* The holders. */
bool dead[3];
byte hb_left[3];        /* the heartbeat's own count; > 0: holds by its own count */
byte t_left[3];         /* LEASE at the clock reading of the write in progress */
byte started = 0;       /* holders that have begun */
byte crashes = 0;
byte lost = 0;

#define holds(h) (hb_left[h] > 0)

/* The heartbeat counts left ticks from now: the holder believes it holds. */
inline hold(h, left) {
  hb_left[h] = left;
  t_left[h] = 0;
  printf("h%d holds the lock by its own count for %d ticks\n", h, hb_left[h]);
  assert(!holds(h) || ((h == 0 || !holds(0)) && (h == 1 || !holds(1)) && (h == 2 || !holds(2))));  /* exclusion */
}

#define down(x) x = (x > 0 -> x - 1 : 0)

inline key_changed() {
  mine[0] = false; mine[1] = false; mine[2] = false;
  seen[0] = false; seen[1] = false; seen[2] = false
}

/* ETCD: the store ends lease l and deletes the key bound to it (a revoke, or the
 * lessor ending a lease whose TTL ran out). */
inline end_lease(l) {
  sl_live[l] = false;
  sl_left[l] = 0;
  if
  :: key_lease == l + 1 ->
     printf("the store deletes h%d's body with the lease\n", key_id - 1);
     key_held = false; key_id = 0; key_lease = 0; key_changed()
  :: else -> skip
  fi
}

#ifdef ETCD
#define body_from(h) key_lease = h + 1  /* the body's own lease decides nothing here */
#define LEASE_LIVE(h) sl_live[h]         /* etcd refuses a put bound to a lease it ended */
#else
#define body_from(h) body_left = t_left[h] + SKEW_ROOM
#define LEASE_LIVE(h) true
#endif

/* The writes of holder h as the store applies them, linearizably; out: the outcome. */

/* Store::create / StoreLeases::create_bound: where the key holds no body. */
inline create(h) {
  if
  :: LEASE_LIVE(h) && !key_held ->
     printf("h%d's create lands: acquired\n", h);
     assert(!holds(0) && !holds(1) && !holds(2));  /* tokens */
     key_changed(); key_held = true; key_id = h + 1; body_from(h); t_left[h] = 0;
     out = OK
  :: !LEASE_LIVE(h) && !key_held ->  /* etcd: "requested lease not found" */
     printf("h%d's create refused: its store lease had ended\n", h); out = FAILED
  :: key_held ->
     printf("h%d's create refused: the key holds h%d's body\n", h, key_id - 1); out = EXISTS
  fi
}

/* Store::update / StoreLeases::update_bound at the revision h holds. */
inline update(h) {
  if
#ifdef MUTANT_RENEW_BLIND
  :: key_held ->
#else
  :: key_held && mine[h] ->
#endif
     if
     :: LEASE_LIVE(h) ->
        printf("h%d's renewal lands\n", h);
        key_changed(); key_id = h + 1; body_from(h);
        out = OK
     :: else ->                      /* etcd: "requested lease not found" */
        printf("h%d's renewal refused: its store lease had ended\n", h); out = FAILED
     fi
  :: else -> printf("h%d's renewal refused: changed\n", h); out = CHANGED
  fi
}

/* Store::remove at the revision h judged (a break, blind: without its compare) or read
 * (a release). */
inline remove(h, blind) {
  if
  :: key_held && (seen[h] || blind) ->
     printf("h%d's remove lands: h%d's body is gone\n", h, key_id - 1);
     assert(key_id == seen_id);  /* once */
     key_held = false; key_id = 0; body_left = 0; key_lease = 0; key_changed();
     out = OK
  :: else -> printf("h%d's remove refused: changed\n", h); out = CHANGED
  fi
}

/* judge_stored_lock (lock_life.cpp) on the entry Store::get reads now: on to the break
 * (fall through), or to recreate (the key went with its store lease), or done (held). */
inline judge(h) {
  /* the key holds the body that refused the create (a read that finds none later
   * is lost_race: the holder stops, as one that paused does) */
  seen[h] = true; seen_id = key_id;
#ifdef ETCD
  /* StoreLeases::life: ended once the store ended the lease; a lease whose TTL ran
   * out but which the store has not ended yet may already answer TTL -1 */
  if
  :: !sl_live[key_lease - 1] || sl_left[key_lease - 1] == 0 ->
     printf("h%d judges h%d's body: break (store_lease_ended: nothing to remove)\n", h, key_id - 1);
     seen[h] = false; seen_id = 0; goto recreate
  :: sl_live[key_lease - 1] -> skip
  fi;
  /* judge_lock (lock_verdict.cpp): lease_ended is held while the store lease runs */
  if
  :: dead[key_id - 1] ->           /* a judge on the holder's machine */
     printf("h%d judges h%d's body: break (process_gone)\n", h, key_id - 1)
  :: else -> printf("h%d judges h%d's body: held\n", h, key_id - 1); goto done
  fi
#else
  /* judge_lock (lock_verdict.cpp) */
  if
  :: dead[key_id - 1] ->           /* a judge on the holder's machine */
     printf("h%d judges h%d's body: break (process_gone)\n", h, key_id - 1)
  :: !dead[key_id - 1] && body_left == 0 ->
     printf("h%d judges h%d's body: break (lease_ended)\n", h, key_id - 1)
  :: else -> printf("h%d judges h%d's body: held (lease_runs)\n", h, key_id - 1); goto done
  fi
#endif
}

/* LockRenewal::adopt_own_body: held_lock reads the key; a body of our id is ours
 * (only its holder writes that id): renewed from its revision on the next try. Else
 * the lock is lost. */
inline adopt(h) {
  if
#ifdef MUTANT_ADOPT_ANY
  :: key_held -> mine[h] = true; printf("h%d adopts the body it finds (h%d's)\n", h, key_id - 1); goto beat
#else
  :: key_held && key_id == h + 1 -> mine[h] = true; printf("h%d adopts its own body\n", h); goto beat
#endif
  :: else -> printf("h%d finds another's body, or none: the lock is lost\n", h); goto lost_lock
  fi
}

proctype Holder(byte h) {
  byte seen_id = 0;   /* the acquisition id of the entry judged or released */
  mtype out = 0;

  /* acquire_lock (lock_life.cpp), one try: acquire_lock_wait's later tries are the
   * same holder starting after a pause, which the scheduler already gives. The
   * holders are alike, so they start in the order of their numbers (any run is one
   * of these with the holders renumbered). */
  atomic {
    started == h -> started++;
#ifdef ETCD
    sl_live[h] = true; sl_left[h] = LEASE;  /* create_entry: grant; its TTL counts from here */
    printf("h%d acquires: its store lease granted for %d ticks\n", h, LEASE)
#else
    t_left[h] = LEASE;   /* acquire_lock's now: the body's leaseUntil counts from it */
    printf("h%d acquires: reads its clock (its body's lease: %d ticks from now)\n", h, LEASE + SKEW_ROOM)
#endif
  };
  /* create_entry: Store::create (create_bound); when the key holds a body, Store::get
   * and judge_stored_lock at the instant of the answer (a later read is the same
   * holder trying after a pause, whose create might then land) */
  atomic {
    create(h);
    if
    :: out == OK -> mine[h] = true; goto acquired
    :: out == FAILED -> goto done
    :: out == EXISTS ->
#ifdef ETCD
       sl_live[h] = false; sl_left[h] = 0;  /* create_entry revokes the unbound lease */
#endif
       judge(h)
    fi
  };
  /* acquire_lock: break exactly the body judged: Store::remove at its revision */
  atomic {
#ifdef MUTANT_BREAK_BLIND
    remove(h, true);
#else
    remove(h, false);
#endif
    if
    :: out == OK -> seen_id = 0
    :: out == CHANGED -> goto done   /* lost_race: a holder that renewed keeps its lock */
    fi
  };
recreate:
#ifdef ETCD
  atomic {                         /* create_entry: a new grant */
    sl_live[h] = true; sl_left[h] = LEASE;
    printf("h%d's store lease granted for %d ticks\n", h, LEASE)
  };
#endif
  atomic {
    create(h);
    if
    :: out == OK -> mine[h] = true
    :: else -> goto done             /* lost_race (exists), or the lease gone */
    fi
  };

acquired:
  /* acquire_lock returned the lock; its caller (lock run, lj_lock_heartbeat_start)
   * starts the heartbeat: a pause here may last any number of ticks. */
  atomic {
    out = 0;
    printf("h%d starts its heartbeat\n", h);
    /* LockRenewal::LockRenewal: lease_end_ns_ = lock.lease_from_ns + lease, the
     * steady clock read at acquire_lock's start (lib/src/lock_life.cpp) */
#if defined(MUTANT_HEARTBEAT_OWN_START)
    hold(h, LEASE)                   /* from the heartbeat's own start */
#elif defined(ETCD)
    hold(h, sl_left[h])              /* from the grant, when the store lease began */
#else
    /* from acquire_lock's now, when the body's lease began (body_left is that count
     * plus SKEW_ROOM while the body is ours; once it is not, the lease had ended) */
    if
    :: key_id == h + 1 && body_left > SKEW_ROOM -> hold(h, body_left - SKEW_ROOM)
    :: else -> hold(h, 0)
    fi
#endif
  };

beat:
  /* LockRenewal::run */
  if
  :: atomic {
       /* tried_at: only a renewal started within the lease can keep it; else on_lost */
       if
       :: !holds(h) -> printf("h%d's lease ran out unrenewed: on_lost\n", h); goto lost_lock
       :: else -> printf("h%d renews (tried_at)\n", h)
       fi;
#ifdef ETCD
       /* renew_lock -> update_bound_entry: StoreLeases::keep_alive first, at tried_at
        * (one sent later only makes the store lease run longer). On a lease whose TTL
        * ran out etcd answers once it ended the lease, or extends it when a new
        * leader takes over first. */
       if
       :: lost < LOST -> lost++; printf("h%d's keep-alive lost on its way\n", h); goto beat
       :: sl_live[h] -> sl_left[h] = LEASE;
          if
          :: lost < LOST -> lost++; printf("h%d's keep-alive landed, its answer lost\n", h); goto beat
          :: true
          fi
       :: !sl_live[h] ->               /* Errc::not_found: the key went with it (changed) */
          printf("h%d's keep-alive: the lease is gone\n", h); adopt(h)
       fi
#else
       t_left[h] = LEASE               /* tried_at, and clock_() for the renewed body */
#endif
     }
  :: atomic { hb_left[h] = 0; printf("h%d stops\n", h); goto lost_lock }  /* stop(), then release_lock */
  :: atomic { crashes < CRASHES -> crashes++; dead[h] = true; hb_left[h] = 0; printf("h%d crashes\n", h); goto done }
  fi;
  /* renew_lock: Store::update (update_bound) at the revision last seen */
  if
  :: atomic {                       /* lost on its way: tried again */
       lost < LOST -> lost++; t_left[h] = 0; printf("h%d's renewal lost on its way\n", h); goto beat
     }
  :: atomic {
       update(h);
       if
       :: lost < LOST ->               /* landed or not, its answer lost: tried again */
          lost++; t_left[h] = 0; printf("h%d: the renewal's answer is lost\n", h); goto beat
       :: true
       fi;
       if
       :: out == OK ->
          mine[h] = true;
#ifdef ETCD
          hold(h, sl_left[h]);       /* tried_at + lease: the keep-alive's instant */
#else
          hold(h, t_left[h]);        /* tried_at + lease */
#endif
          goto beat
       :: out == FAILED -> goto beat   /* an error: tried again */
       :: out == CHANGED -> t_left[h] = 0; adopt(h)  /* the key moved */
       fi
     }
  fi;

lost_lock:
  /* on_lost; lock run then releases the lock too while its body is still ours:
   * release_lock's Store::get and id check */
  atomic {
    hb_left[h] = 0; t_left[h] = 0; mine[h] = false;
    printf("h%d releases the lock (release_lock)\n", h);
    if
    :: key_held && key_id == h + 1 -> seen[h] = true; seen_id = h + 1
    :: else -> printf("h%d releases nothing: the body is not its own\n", h); goto done  /* not_found / changed */
    fi
  };
  /* release_lock: Store::remove at the revision read */
  atomic {
    remove(h, false);
#ifdef ETCD
    if
    :: out == OK -> end_lease(h)     /* revoke, once the remove landed: it binds nothing */
    :: else -> skip
    fi
#endif
  };

done:
  atomic {
    seen[h] = false; mine[h] = false; t_left[h] = 0; seen_id = 0; out = 0;
#ifdef ETCD
    /* a lease no key is bound to, which nothing of h's can bind any more, may end
     * whenever it likes without effect: ended now */
    if
    :: key_lease != h + 1 -> sl_live[h] = false; sl_left[h] = 0
    :: else -> skip
    fi
#endif
  }
}

/* Time: a tick runs every count down; on ETCD the store ends a lease whose TTL ran
 * out whenever it gets to it. */
active proctype Time() {
end_time:
  do
  :: d_step {
       printf("tick\n");
       down(hb_left[0]); down(hb_left[1]); down(hb_left[2]);
#ifdef ETCD
       down(sl_left[0]); down(sl_left[1]); down(sl_left[2])
#else
       down(t_left[0]); down(t_left[1]); down(t_left[2]); down(body_left)
#endif
     }
#ifdef ETCD
  :: atomic { sl_live[0] && sl_left[0] == 0 -> printf("the store ends h0's lease\n"); end_lease(0) }
  :: atomic { sl_live[1] && sl_left[1] == 0 -> printf("the store ends h1's lease\n"); end_lease(1) }
  :: atomic { sl_live[2] && sl_left[2] == 0 -> printf("the store ends h2's lease\n"); end_lease(2) }
#endif
  od
}

init {
  atomic {
    run Holder(0); run Holder(1); run Holder(2)
  }
}
