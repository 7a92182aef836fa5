//! The block pipeline: independent blocks coded by worker threads while the
//! caller's thread reads input and writes output, in order.
//!
//! [`Pipeline`] is the stage between the two ends: the caller
//! [`submit`](Pipeline::submit)s jobs in order, up to `threads` worker threads
//! run them (each job start to finish on one thread), and
//! [`next`](Pipeline::next) hands the results back in submission order. The
//! [`Encoder`](crate::Encoder) submits raw blocks and writes the coded ones;
//! the [`Decoder`](crate::Decoder) submits the blocks it reads ahead and
//! returns the decoded bytes. Both keep at most `threads + 1` jobs in
//! flight (submitted, result not yet taken), so memory does not grow with the
//! input, and a worker that finishes a block finds the next one queued: compute
//! never waits for the caller's reading or writing.
//!
//! Blocks are independent, so which thread codes a block, and when, cannot
//! change a byte of the archive.
//!
//! **Thread budget.** While several blocks are being coded, each runs its
//! kernels on its own thread; when fewer blocks than `threads` are being coded,
//! the spare threads go to the kernels' pool (`sep_kernels::set_num_threads`,
//! a process-wide setting, which never changes a result): with `a` blocks
//! active the pool may use `threads + 1 - a` threads, and since the pool runs
//! one job at a time (a busy pool runs the other callers inline), at most
//! `threads` threads compute at any moment.
//!
//! **Batch mode** (`pipelined = false`) is the schedule sep had before: read
//! `threads` blocks, code them, return all of them, and only then read more.
//! It exists to measure what the pipeline buys.
//!
//! **Dropping** a pipeline sets its [`Cancel`] flag (models check it every
//! step and return early; their output is then discarded), closes the queue
//! and joins the workers: it neither hangs for long nor leaves threads behind.
//!
//! The queues are allocated once, so the steady state allocates nothing.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// Set when the work in progress is no longer wanted: models poll it between
/// steps and stop early.
#[derive(Debug, Default)]
pub(crate) struct Cancel(AtomicBool);

impl Cancel {
    /// Whether the work should stop.
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What a worker runs for each job.
type JobFn<J, R> = dyn Fn(J, &Cancel) -> R + Send + Sync;

struct State<J, R> {
    /// Submitted jobs not yet taken by a worker, with their sequence numbers.
    queue: VecDeque<(u64, J)>,
    /// Results of jobs `taken ..`, in order; `None` while still running.
    results: VecDeque<Option<std::thread::Result<R>>>,
    /// Sequence number of the next result to hand back.
    taken: u64,
    /// Jobs being run by a worker now.
    active: usize,
    /// Workers waiting for a job.
    idle: usize,
    /// No more jobs: workers exit when the queue is empty.
    closed: bool,
}

struct Shared<J, R> {
    state: Mutex<State<J, R>>,
    /// Signalled when a job is queued or the queue is closed.
    work: Condvar,
    /// Signalled when a result is stored.
    done: Condvar,
    cancel: Cancel,
    job: Box<JobFn<J, R>>,
    /// The thread budget (workers and kernel threads together).
    threads: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Jobs run under `catch_unwind` outside the lock, so a poisoned lock only
    // means a panic in this module's own bookkeeping; the state is still whole.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Gives the kernels the threads that blocks do not use (module docs).
fn share_threads(threads: usize, active: usize) {
    if threads > 1 && active > 0 {
        sep_kernels::set_num_threads((threads + 1).saturating_sub(active).max(1));
    }
}

/// Jobs `J` run on worker threads, results `R` returned in submission order.
pub(crate) struct Pipeline<J: Send + 'static, R: Send + 'static> {
    shared: Arc<Shared<J, R>>,
    workers: Vec<JoinHandle<()>>,
    /// Sequence number of the next job to submit.
    submitted: u64,
    limit: usize,
    pipelined: bool,
}

impl<J: Send + 'static, R: Send + 'static> Pipeline<J, R> {
    /// A pipeline of up to `threads` workers running `job`. With `pipelined`,
    /// up to `threads + 1` jobs are in flight (one queued behind the running
    /// ones); in batch mode, `threads`.
    pub(crate) fn new(
        threads: usize,
        pipelined: bool,
        job: impl Fn(J, &Cancel) -> R + Send + Sync + 'static,
    ) -> Self {
        let threads = threads.max(1);
        let limit = threads + usize::from(pipelined);
        if threads == 1 {
            // Kernels then run single-threaded whatever the pool's default.
            sep_kernels::set_num_threads(1);
        }
        Pipeline {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::with_capacity(limit),
                    results: VecDeque::with_capacity(limit),
                    taken: 0,
                    active: 0,
                    idle: 0,
                    closed: false,
                }),
                work: Condvar::new(),
                done: Condvar::new(),
                cancel: Cancel::default(),
                job: Box::new(job),
                threads,
            }),
            workers: Vec::with_capacity(threads),
            submitted: 0,
            limit,
            pipelined,
        }
    }

    /// Jobs submitted whose results have not been taken.
    pub(crate) fn in_flight(&self) -> usize {
        (self.submitted - lock(&self.shared.state).taken) as usize
    }

    /// How many jobs the caller may [`submit`](Self::submit) now: up to the
    /// limit; in batch mode, a whole batch once every result of the last one
    /// has been taken, and none before.
    pub(crate) fn room(&self) -> usize {
        let n = self.in_flight();
        if self.pipelined || n == 0 {
            self.limit - n
        } else {
            0
        }
    }

    /// Queues a job.
    ///
    /// # Panics
    /// If the limit of jobs in flight is reached.
    pub(crate) fn submit(&mut self, job: J) {
        let mut st = lock(&self.shared.state);
        let in_flight = (self.submitted - st.taken) as usize;
        assert!(in_flight < self.limit, "pipeline: too many jobs in flight");
        st.queue.push_back((self.submitted, job));
        st.results.push_back(None);
        self.submitted += 1;
        // A job queued beyond the idle workers gets a new worker, up to `threads`.
        let spawn = st.queue.len() > st.idle && self.workers.len() < self.shared.threads;
        drop(st);
        if spawn {
            let shared = Arc::clone(&self.shared);
            let index = self.workers.len();
            let started = std::thread::Builder::new()
                .name(format!("sep-block-{index}"))
                .spawn(move || worker(&shared));
            match started {
                Ok(handle) => self.workers.push(handle),
                // Fewer threads only means less parallelism, unless there is none.
                Err(e) => assert!(!self.workers.is_empty(), "cannot start a thread: {e}"),
            }
        }
        self.shared.work.notify_one();
    }

    /// The result of the oldest job in flight, waiting for it if needed;
    /// `None` when nothing is in flight. A panic in the job is resumed here.
    pub(crate) fn next(&mut self) -> Option<R> {
        self.take(true)
    }

    /// Like [`next`](Self::next), but `None` also when the oldest job is
    /// still running.
    pub(crate) fn try_next(&mut self) -> Option<R> {
        self.take(false)
    }

    fn take(&mut self, wait: bool) -> Option<R> {
        let mut st = lock(&self.shared.state);
        loop {
            match st.results.front() {
                None => return None,
                Some(Some(_)) => break,
                Some(None) if wait => {
                    st = self
                        .shared
                        .done
                        .wait(st)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                Some(None) => return None,
            }
        }
        let result = st.results.pop_front().flatten().expect("checked: a result");
        st.taken += 1;
        drop(st);
        Some(result.unwrap_or_else(|panic| resume_unwind(panic)))
    }
}

fn worker<J, R>(shared: &Shared<J, R>) {
    loop {
        let (seq, job) = {
            let mut st = lock(&shared.state);
            loop {
                if let Some(j) = st.queue.pop_front() {
                    st.active += 1;
                    share_threads(shared.threads, st.active);
                    break j;
                }
                if st.closed {
                    return;
                }
                st.idle += 1;
                st = shared.work.wait(st).unwrap_or_else(PoisonError::into_inner);
                st.idle -= 1;
            }
        };
        let result = catch_unwind(AssertUnwindSafe(|| (shared.job)(job, &shared.cancel)));
        let mut st = lock(&shared.state);
        st.active -= 1;
        share_threads(shared.threads, st.active);
        let slot = (seq - st.taken) as usize;
        st.results[slot] = Some(result);
        drop(st);
        shared.done.notify_all();
    }
}

impl<J: Send + 'static, R: Send + 'static> Drop for Pipeline<J, R> {
    fn drop(&mut self) {
        self.shared.cancel.set();
        {
            let mut st = lock(&self.shared.state);
            st.closed = true;
            st.queue.clear();
        }
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            // A job's panic was caught and reported through `next`, or is
            // unwanted now; the worker itself does not panic.
            let _ = w.join();
        }
    }
}
