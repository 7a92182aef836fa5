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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// The most threads (blocks coded at once) a pipeline, an [`Encoder`](crate::Encoder)
/// or a [`Decoder`](crate::Decoder) uses: larger requests are clamped to it. Each
/// thread may hold a model and blocks in flight, so an absurd count (`-T 100000000`)
/// must not turn into an absurd allocation; 256 is well past the cores of any machine
/// sep runs on, and past the point where more blocks at once pay.
pub const MAX_THREADS: usize = 256;

/// Set when the work in progress is no longer wanted: models poll it between
/// steps and stop early. Models also report through it the bytes they have
/// coded (see [`Progress`]).
#[derive(Debug, Default)]
pub(crate) struct Cancel(Arc<AtomicBool>, Progress);

impl Cancel {
    /// Whether the work should stop.
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// The same flag with a progress count of its own, for work whose bytes
    /// must not count (a probe, or a transform's inner bytes, coded before or
    /// beside the block itself).
    pub(crate) fn quiet(&self) -> Cancel {
        Cancel(Arc::clone(&self.0), Progress::default())
    }

    /// Records that a model has coded `bytes` more bytes of a block.
    #[inline]
    pub(crate) fn advance(&self, bytes: u64) {
        self.1.0.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// How many content bytes an [`Encoder`](crate::Encoder) has coded, or a
/// [`Decoder`](crate::Decoder) has decoded, so far, across all worker
/// threads: it rises while a block is being coded (the models report every
/// 256 steps, order2 every chunk of about 10 ms), unlike counts of bytes read
/// or written, which move by whole blocks. For progress bars: read it from
/// any thread while the coder works. A block the encoder then stores is
/// counted as coded; the count never exceeds the content length.
#[derive(Debug, Default, Clone)]
pub struct Progress(Arc<AtomicU64>);

impl Progress {
    /// Content bytes coded so far.
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
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
    /// Batch mode: sequence number of the current batch's first job.
    batch_start: u64,
    limit: usize,
    pipelined: bool,
}

impl<J: Send + 'static, R: Send + 'static> Pipeline<J, R> {
    /// A pipeline of up to `threads` workers running `job` (`threads` clamped to
    /// `1..=MAX_THREADS`). With `pipelined`, up to `threads + 1` jobs are in
    /// flight (one queued behind the running ones); in batch mode, `threads`.
    pub(crate) fn new(
        threads: usize,
        pipelined: bool,
        job: impl Fn(J, &Cancel) -> R + Send + Sync + 'static,
    ) -> Self {
        Self::with_progress(threads, pipelined, Progress::default(), job)
    }

    /// Like [`new`](Self::new), counting coded bytes on `progress`.
    pub(crate) fn with_progress(
        threads: usize,
        pipelined: bool,
        progress: Progress,
        job: impl Fn(J, &Cancel) -> R + Send + Sync + 'static,
    ) -> Self {
        let threads = threads.clamp(1, MAX_THREADS);
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
                cancel: Cancel(Arc::new(AtomicBool::new(false)), progress),
                job: Box::new(job),
                threads,
            }),
            workers: Vec::with_capacity(threads),
            submitted: 0,
            batch_start: 0,
            limit,
            pipelined,
        }
    }

    /// The bytes the jobs' models have coded so far.
    pub(crate) fn progress(&self) -> Progress {
        self.shared.cancel.1.clone()
    }

    /// Jobs submitted whose results have not been taken.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        (self.submitted - lock(&self.shared.state).taken) as usize
    }

    /// How many jobs the caller may [`submit`](Self::submit) now: up to the
    /// limit. In batch mode a batch fills up to the limit until its first
    /// result is taken; then nothing more until every result of it is.
    pub(crate) fn room(&self) -> usize {
        let taken = lock(&self.shared.state).taken;
        let n = (self.submitted - taken) as usize;
        if self.pipelined || n == 0 || taken == self.batch_start {
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
        if in_flight == 0 {
            self.batch_start = self.submitted;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `f` on a thread and fails if it has not returned after a minute:
    /// a hang detector (the work itself takes milliseconds), not a timing test.
    fn within_a_minute(what: &str, f: impl FnOnce() + Send + 'static) {
        let (tx, rx) = mpsc::channel();
        let t = std::thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(()) => t.join().expect("no panic"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // `f` panicked: report its panic.
                if let Err(p) = t.join() {
                    resume_unwind(p);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung"),
        }
    }

    #[test]
    fn results_come_back_in_submission_order() {
        for threads in 1..=4 {
            for pipelined in [true, false] {
                // Early jobs take longest, so they finish last.
                let mut p = Pipeline::new(threads, pipelined, |j: u64, _: &Cancel| {
                    std::thread::sleep(Duration::from_millis(20 - j % 5 * 4));
                    j * 10
                });
                let (mut next_job, mut got) = (0u64, Vec::new());
                while got.len() < 23 {
                    let room = p.room();
                    assert!(room <= threads + 1, "room {room} with {threads} threads");
                    assert!(p.in_flight() + room <= threads + usize::from(pipelined));
                    if room > 0 && next_job < 23 {
                        p.submit(next_job);
                        next_job += 1;
                    } else {
                        got.push(p.next().expect("a job in flight"));
                    }
                }
                assert!(p.next().is_none() && p.try_next().is_none());
                let want: Vec<u64> = (0..23).map(|j| j * 10).collect();
                assert_eq!(got, want, "{threads} threads, pipelined {pipelined}");
            }
        }
    }

    #[test]
    fn batch_mode_takes_a_batch_only_once_the_last_is_returned() {
        let mut p = Pipeline::new(3, false, |j: u32, _: &Cancel| j);
        assert_eq!(p.room(), 3);
        p.submit(1);
        p.submit(2);
        assert_eq!(p.room(), 1);
        p.submit(3);
        assert_eq!(p.room(), 0);
        assert_eq!(p.next(), Some(1));
        assert_eq!(p.room(), 0, "batch mode waits for the whole batch");
        assert_eq!(p.next(), Some(2));
        assert_eq!(p.next(), Some(3));
        assert_eq!(p.room(), 3);
        let mut q = Pipeline::new(3, true, |j: u32, _: &Cancel| j);
        assert_eq!(q.room(), 4, "pipelined: one more queued behind the workers");
        q.submit(1);
        assert_eq!(q.room(), 3);
    }

    #[test]
    fn a_panicking_job_panics_the_caller_in_order_and_leaves_no_thread() {
        within_a_minute("panic", || {
            let mut p = Pipeline::new(2, true, |j: u32, _: &Cancel| {
                assert!(j != 1, "job 1 fails");
                j
            });
            p.submit(0);
            p.submit(1);
            p.submit(2);
            assert_eq!(p.next(), Some(0));
            let caught = catch_unwind(AssertUnwindSafe(|| p.next()));
            assert!(caught.is_err(), "job 1's panic reaches the caller");
            // The pipeline still returns what follows, and drops cleanly.
            assert_eq!(p.next(), Some(2));
        });
    }

    #[test]
    fn dropping_cancels_running_jobs_and_joins_the_workers() {
        within_a_minute("drop", || {
            for pipelined in [true, false] {
                // Jobs that only end when cancelled.
                let mut p = Pipeline::new(3, pipelined, |j: u32, c: &Cancel| {
                    while !c.is_set() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    j
                });
                while p.room() > 0 {
                    p.submit(7);
                }
                drop(p);
            }
        });
    }

    #[test]
    fn absurd_thread_counts_are_clamped() {
        for threads in [MAX_THREADS + 1, 100_000_000, usize::MAX] {
            let mut p = Pipeline::new(threads, true, |j: u32, _: &Cancel| j);
            assert_eq!(p.room(), MAX_THREADS + 1, "{threads}");
            assert!(p.workers.capacity() < 2 * MAX_THREADS);
            p.submit(5);
            assert_eq!(p.next(), Some(5));
        }
    }

    #[test]
    fn results_not_taken_are_dropped_with_the_pipeline() {
        within_a_minute("drop with results", || {
            let mut p = Pipeline::new(2, true, |j: Vec<u8>, _: &Cancel| j);
            for _ in 0..3 {
                p.submit(vec![1; 1000]);
            }
            assert_eq!(p.next().map(|v| v.len()), Some(1000));
        });
    }
}
