//! A persistent thread pool that splits a kernel's *output* between threads.
//!
//! Kernels cut their output into independent parts (row blocks, column panels) and
//! call [`run_parts`]; each part is computed start to finish by one thread, so which
//! thread runs a part can never change a bit. No reduction is ever split.
//!
//! The pool is process-wide. The calling thread always works on the job too; at most
//! [`num_threads`]` - 1` workers join it. Workers are spawned once, on the first
//! parallel call. Between jobs a worker first spins for [`SPIN`], then sleeps on a
//! condition variable: a training step issues its kernels a few microseconds apart, and
//! waking a sleeping thread costs tens of microseconds, as much as a whole small
//! product (the caller never waits for that: it starts on the parts itself). The
//! caller likewise spins briefly before sleeping while the last parts finish. The pool
//! runs one job at a time: a call that finds it busy (another thread's kernel, e.g. two
//! compression blocks with their own models) simply runs all its parts inline, which
//! gives the same bits.
//!
//! On a loaded machine the workers may get no core while a job runs; handing them parts
//! then only costs wake-ups, spinning and waiting (and under fair-share scheduling that
//! CPU time is taken from the caller). So the pool watches whether workers took any part
//! of a job: after each job they missed, the next `2^misses` jobs (at most
//! [`MAX_SKIP`]) run inline on the caller, then the workers are tried again. Which
//! thread runs a part never changes a bit, so none of this does either.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long an idle worker (or a caller waiting for the last parts) polls before it
/// sleeps: about the gap between consecutive kernels of a training step, short enough
/// not to burn a shared core through the serial parts. (Measured on 2 shared Zen 4
/// cores: 0, 20 and 50 us gave the same wall time within noise, the longer spins more
/// CPU time. Yielding while polling was tried too: on a loaded machine a yielding
/// worker loses its core for a whole time slice and then misses every job.)
const SPIN: Duration = Duration::from_micros(20);

/// The most jobs run inline after workers missed jobs (about 5 training steps).
const MAX_SKIP: u32 = 64;

/// Polls `ready` for up to [`SPIN`]; returns whether it became true.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return ready();
        }
    }
}

/// 0: not decided yet (default: `SEP_KERNELS_THREADS`, else the available parallelism).
static NUM_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads (the caller included) a kernel may use; `0` means 1.
/// Results do not depend on it.
pub fn set_num_threads(n: usize) {
    NUM_THREADS.store(n.max(1), Ordering::Relaxed);
}

/// How many threads (the caller included) a kernel may use.
///
/// Defaults to the environment variable `SEP_KERNELS_THREADS` if it holds a positive
/// integer, else to [`std::thread::available_parallelism`].
pub fn num_threads() -> usize {
    match NUM_THREADS.load(Ordering::Relaxed) {
        0 => {
            let n = std::env::var("SEP_KERNELS_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            // A concurrent `set_num_threads` wins over the default.
            match NUM_THREADS.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => n,
                Err(set) => set,
            }
        }
        n => n,
    }
}

/// A job: a borrowed `Fn(part)` whose lifetime was erased. [`run_parts`] does not
/// return before every part has finished, which keeps the borrow alive long enough.
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the pointee is `Sync`, and `run_parts` keeps it alive while workers use it.
unsafe impl Send for JobRef {}

struct State {
    /// Incremented for every job, so sleeping workers notice a new one.
    epoch: u64,
    job: Option<JobRef>,
    /// Workers with index below this join the current job.
    wanted: usize,
    n_parts: usize,
    next_part: usize,
    unfinished: usize,
    panicked: bool,
    /// Parts of the current job taken by workers.
    by_workers: usize,
    /// Consecutive jobs in which workers took no part.
    misses: u32,
    /// Jobs still to run inline before the workers are tried again.
    skip: u32,
    /// Workers sleeping on `work`.
    sleepers: usize,
    /// Whether the job's caller sleeps on `done`.
    caller_sleeps: bool,
}

struct Pool {
    /// Held by the thread whose job the pool is running.
    busy: Mutex<()>,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    spawned: Mutex<usize>,
    /// `state.epoch`, readable without the lock (for spinning workers).
    epoch: AtomicU64,
    /// `state.unfinished`, readable without the lock (for the spinning caller).
    unfinished: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        busy: Mutex::new(()),
        state: Mutex::new(State {
            epoch: 0,
            job: None,
            wanted: 0,
            n_parts: 0,
            next_part: 0,
            unfinished: 0,
            panicked: false,
            by_workers: 0,
            misses: 0,
            skip: 0,
            sleepers: 0,
            caller_sleeps: false,
        }),
        work: Condvar::new(),
        done: Condvar::new(),
        spawned: Mutex::new(0),
        epoch: AtomicU64::new(0),
        unfinished: AtomicUsize::new(0),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Parts run under `catch_unwind`, so a poisoned lock only means a panic elsewhere
    // while holding it; the state is still consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How many threads a job that may use `threads` should plan for now: `threads`, or 1
/// while the pool runs jobs inline because workers missed recent ones (this counts as
/// one such job). Kernels call it before cutting a job into parts, so that a job run
/// inline is not cut needlessly.
pub(crate) fn plan_threads(threads: usize) -> usize {
    if threads <= 1 {
        return 1;
    }
    let mut st = lock(&pool().state);
    if st.skip > 0 {
        st.skip -= 1;
        1
    } else {
        threads
    }
}

/// Runs `f(0)`, ..., `f(n_parts - 1)`, using up to `threads` threads (the caller
/// included). Returns when all parts are done. Parts must write disjoint outputs.
///
/// Runs inline when `threads <= 1`, `n_parts <= 1`, or the pool is busy.
///
/// # Panics
/// If a part panicked (after all parts have finished).
pub(crate) fn run_parts(n_parts: usize, threads: usize, f: &(dyn Fn(usize) + Sync)) {
    let threads = threads.min(n_parts);
    if threads <= 1 {
        (0..n_parts).for_each(f);
        return;
    }
    let pool = pool();
    let Ok(_busy) = pool.busy.try_lock() else {
        (0..n_parts).for_each(f);
        return;
    };
    ensure_workers(pool, threads - 1);
    // SAFETY: only the lifetime is erased; the wait below outlives every use.
    let job = JobRef(unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(f)
    });
    let epoch = {
        let mut st = lock(&pool.state);
        if st.skip > 0 {
            // Workers missed recent jobs: run this one on the caller alone.
            st.skip -= 1;
            drop(st);
            (0..n_parts).for_each(f);
            return;
        }
        st.by_workers = 0;
        st.epoch = st.epoch.wrapping_add(1);
        st.job = Some(job);
        st.wanted = threads - 1;
        st.n_parts = n_parts;
        st.next_part = 0;
        st.unfinished = n_parts;
        st.panicked = false;
        pool.unfinished.store(n_parts, Ordering::Relaxed);
        pool.epoch.store(st.epoch, Ordering::Release);
        if st.sleepers > 0 {
            pool.work.notify_all();
        }
        st.epoch
    };
    work_on_job(pool, job, epoch, false);
    spin_until(|| pool.unfinished.load(Ordering::Acquire) == 0);
    let mut st = lock(&pool.state);
    while st.unfinished > 0 {
        st.caller_sleeps = true;
        st = pool.done.wait(st).unwrap_or_else(PoisonError::into_inner);
    }
    st.caller_sleeps = false;
    st.job = None;
    if st.by_workers == 0 {
        st.misses = (st.misses + 1).min(MAX_SKIP.trailing_zeros());
        st.skip = 1 << st.misses;
    } else {
        st.misses = 0;
    }
    let panicked = st.panicked;
    drop(st);
    assert!(
        !panicked,
        "sep-kernels: a kernel part panicked on a pool thread"
    );
}

/// Takes parts of job `epoch` until none is left (or a later job has replaced it).
fn work_on_job(pool: &Pool, job: JobRef, epoch: u64, worker: bool) {
    loop {
        let part = {
            let mut st = lock(&pool.state);
            if st.epoch != epoch || st.next_part >= st.n_parts {
                return;
            }
            st.next_part += 1;
            st.by_workers += usize::from(worker);
            st.next_part - 1
        };
        // SAFETY: the part was taken from job `epoch` while it was current, and that
        // job's `unfinished` stays above 0 until this part is accounted for below, so
        // its `run_parts` caller is still waiting and the closure is alive.
        let f = unsafe { &*job.0 };
        let ok = catch_unwind(AssertUnwindSafe(|| f(part))).is_ok();
        let mut st = lock(&pool.state);
        st.panicked |= !ok;
        st.unfinished -= 1;
        pool.unfinished.store(st.unfinished, Ordering::Release);
        if st.unfinished == 0 && st.caller_sleeps {
            pool.done.notify_all();
        }
    }
}

fn ensure_workers(pool: &'static Pool, n: usize) {
    let mut spawned = lock(&pool.spawned);
    while *spawned < n {
        let index = *spawned;
        let started = std::thread::Builder::new()
            .name(format!("sep-kernels-{index}"))
            .spawn(move || worker(pool, index));
        if started.is_err() {
            // Fewer workers only means less parallelism; the caller still does all
            // parts that nobody takes.
            break;
        }
        *spawned += 1;
    }
}

fn worker(pool: &'static Pool, index: usize) {
    let mut seen = 0u64;
    loop {
        spin_until(|| pool.epoch.load(Ordering::Acquire) != seen);
        let job = {
            let mut st = lock(&pool.state);
            loop {
                if st.epoch != seen {
                    seen = st.epoch;
                    // A job that is over or not for this worker: wait for the next.
                    break if index < st.wanted { st.job } else { None };
                }
                st.sleepers += 1;
                st = pool.work.wait(st).unwrap_or_else(PoisonError::into_inner);
                st.sleepers -= 1;
            }
        };
        if let Some(job) = job {
            work_on_job(pool, job, seen, true);
        }
    }
}
