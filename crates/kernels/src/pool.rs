//! A persistent thread pool that splits a kernel's *output* between threads.
//!
//! Kernels cut their output into independent parts (row blocks, column panels) and
//! call [`run_parts`]; each part is computed start to finish by one thread, so which
//! thread runs a part can never change a bit. No reduction is ever split.
//!
//! The pool is process-wide. The calling thread always works on the job too; at most
//! [`num_threads`]` - 1` workers join it. Workers are spawned once, on the first
//! parallel call, and sleep on a condition variable between jobs. The pool runs one job
//! at a time: a call that finds it busy (another thread's kernel, e.g. two compression
//! blocks with their own models) simply runs all its parts inline, which gives the same
//! bits.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

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
}

struct Pool {
    /// Held by the thread whose job the pool is running.
    busy: Mutex<()>,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    spawned: Mutex<usize>,
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
        }),
        work: Condvar::new(),
        done: Condvar::new(),
        spawned: Mutex::new(0),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Parts run under `catch_unwind`, so a poisoned lock only means a panic elsewhere
    // while holding it; the state is still consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
        st.epoch = st.epoch.wrapping_add(1);
        st.job = Some(job);
        st.wanted = threads - 1;
        st.n_parts = n_parts;
        st.next_part = 0;
        st.unfinished = n_parts;
        st.panicked = false;
        st.epoch
    };
    pool.work.notify_all();
    work_on_job(pool, job, epoch);
    let mut st = lock(&pool.state);
    while st.unfinished > 0 {
        st = pool.done.wait(st).unwrap_or_else(PoisonError::into_inner);
    }
    st.job = None;
    let panicked = st.panicked;
    drop(st);
    assert!(
        !panicked,
        "sep-kernels: a kernel part panicked on a pool thread"
    );
}

/// Takes parts of job `epoch` until none is left (or a later job has replaced it).
fn work_on_job(pool: &Pool, job: JobRef, epoch: u64) {
    loop {
        let part = {
            let mut st = lock(&pool.state);
            if st.epoch != epoch || st.next_part >= st.n_parts {
                return;
            }
            st.next_part += 1;
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
        if st.unfinished == 0 {
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
        let job = {
            let mut st = lock(&pool.state);
            loop {
                if st.epoch != seen {
                    seen = st.epoch;
                    if index < st.wanted
                        && let Some(job) = st.job
                    {
                        break job;
                    }
                }
                st = pool.work.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
        };
        work_on_job(pool, job, seen);
    }
}
