//! A serial LSTM byte predictor, one more input of the context-mixing model
//! (doc/FORMAT.md section 4.13).
//!
//! The network reads the block's bytes in order, the same single stream the
//! context models read, and before each byte predicts a 256-way distribution
//! for it from the bytes before it. One layer of `cells` LSTM cells takes the
//! previous byte (a one-hot vector: a column of the input weights) and its own
//! last output; a softmax layer over the cells gives the distribution. Every
//! `horizon` bytes it trains on the last `horizon` bytes by truncated
//! back-propagation through time and one Adam step (the form of lstm-compress
//! and cmix, described publicly by their authors; no code of theirs is used).
//!
//! Kind 3 (doc/FORMAT.md 4.13.2) trains the same way but installs each
//! training's weights `delay` bytes after its window ends, so the training
//! can run on a second thread while the predictor goes on with the weights
//! it has; with one thread it runs inline at the install point, with the same
//! bits.
//!
//! Determinism: plain `f32` arithmetic (`+ - * /` and `sqrt`, never
//! contracted or reassociated by Rust), in the fixed order written here and
//! in the kernels' `serial_*` loops (vectorised across outputs only), and
//! the kernels' own `exp`, `tanh` and `sigmoid` (`sep_kernels`), which give the
//! same bits on every CPU and build (doc/DETERMINISM.md). The weights start
//! from an integer generator. Nothing is allocated after [`Lstm::new`].

use crate::apm::Apm;
use crate::cm::neural_input;
use crate::logistic::stretch;
use sep_coder::{FreqTable, quantize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// The network's shape and training settings (the 8 bytes of doc/FORMAT.md
/// section 4.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LstmConfig {
    /// The network's kind (`serial_params` byte 0): 1, the LSTM of section
    /// 4.13; 2, the same with a decaying learning rate (section 4.13.1); 3,
    /// kind 2 with delayed weights (section 4.13.2); 4, kind 3's network
    /// with no weight-set selector and mixer weights that start at 0
    /// (section 4.13.3).
    pub kind: u8,
    /// LSTM cells (`8..=248`, a multiple of 8).
    pub cells: u8,
    /// Bytes per training window (`1..=64`): the network trains every
    /// `horizon` bytes on the last `horizon`.
    pub horizon: u8,
    /// Adam's learning rate in units of 1e-4 (`1..=65535`).
    pub lr: u16,
    /// Kinds 3 and 4: bytes between the end of a training window and the
    /// use of the weights trained on it (`0..=255`); 0 for kinds 1 and 2.
    pub delay: u8,
}

impl LstmConfig {
    /// Checks the limits of doc/FORMAT.md section 4.13.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4).contains(&self.kind) {
            return Err(format!("serial network kind {}: 1 to 4", self.kind));
        }
        if self.cells < 8 || !self.cells.is_multiple_of(8) {
            return Err(format!(
                "LSTM cells {}: a multiple of 8, at least 8",
                self.cells
            ));
        }
        if !(1..=64).contains(&self.horizon) {
            return Err(format!("LSTM horizon {} outside 1..=64", self.horizon));
        }
        if self.lr == 0 {
            return Err("LSTM learning rate 0".into());
        }
        if self.kind < 3 && self.delay != 0 {
            return Err(format!(
                "LSTM delay {} with kind {}: only kind 3 delays",
                self.delay, self.kind
            ));
        }
        Ok(())
    }

    /// Trainable parameters.
    pub fn parameters(&self) -> usize {
        let n = usize::from(self.cells);
        4 * n * (256 + n + 1) + 256 * (n + 1)
    }

    /// Kinds 3 and 4: the trainings in flight at once, each with its window
    /// and a copy of the weights (`1 + ceil(delay / horizon)`); 0 for kinds
    /// 1 and 2.
    fn slots(&self) -> usize {
        if self.kind < 3 {
            return 0;
        }
        1 + usize::from(self.delay).div_ceil(usize::from(self.horizon).max(1))
    }

    /// Bytes of memory the network uses (weights, Adam's moments and
    /// gradients, the training window; kind 3: the predictor's weights and
    /// a window and weights per training in flight).
    pub fn memory_bytes(&self) -> u64 {
        let n = usize::from(self.cells);
        let window = usize::from(self.horizon) * (9 * n + 256);
        let s = self.slots();
        let delayed = if s > 0 {
            (s + 1) * self.parameters() + s * window
        } else {
            0
        };
        (4 * (4 * self.parameters() + window + delayed)) as u64
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        let decay = if self.kind >= 2 { ", decaying" } else { "" };
        let delay = match self.kind {
            3 => format!(", delay {}", self.delay),
            4.. => format!(", delay {}, no selector, quiet start", self.delay),
            _ => String::new(),
        };
        format!(
            "lstm ({} cells, horizon {}, lr {}e-4{decay}{delay})",
            self.cells, self.horizon, self.lr
        )
    }
}

/// Adam's moments and gradient of one weight matrix.
#[derive(Debug, Clone)]
struct Param {
    w: Vec<f32>,
    g: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
}

impl Param {
    fn new(n: usize, scale: f32, rng: &mut u64) -> Self {
        let w = (0..n)
            .map(|_| {
                // xorshift64*: 24 random bits to a uniform value in
                // [-scale, scale), exactly.
                *rng ^= *rng >> 12;
                *rng ^= *rng << 25;
                *rng ^= *rng >> 27;
                let r = (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as i32;
                (r - (1 << 23)) as f32 / (1 << 23) as f32 * scale
            })
            .collect();
        Param {
            w,
            g: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
        }
    }

    /// One Adam step over `range` with step size `step` (bias corrections
    /// folded in), then clears those gradients.
    #[inline]
    fn adam(&mut self, range: std::ops::Range<usize>, step: f32) {
        // beta 0.9 / 0.999, eps 1e-6, gradients clipped to +-CLIP
        // (sep_kernels' loop: doc/DETERMINISM.md K4d).
        sep_kernels::serial_adam(
            &mut self.w[range.clone()],
            &mut self.g[range.clone()],
            &mut self.m[range.clone()],
            &mut self.v[range],
            step,
            CLIP,
        );
    }
}

/// Gradients are clipped to this magnitude before Adam's step.
const CLIP: f32 = 4.0;

/// The weights a forward step reads.
#[derive(Clone, Copy)]
struct WeightsRef<'a> {
    wx: &'a [f32],
    wh: &'a [f32],
    b: &'a [f32],
    wy: &'a [f32],
    by: &'a [f32],
}

/// One training window: per step, the input byte, target byte and saved
/// activations.
#[derive(Debug, Clone)]
struct Window {
    x: Vec<u8>,
    y: Vec<u8>,
    h_prev: Vec<f32>,
    c_prev: Vec<f32>,
    gates: Vec<f32>,
    tanh_c: Vec<f32>,
    h_out: Vec<f32>,
    probs: Vec<f32>,
    /// Input columns seen in the window (their weights train).
    seen: [bool; 256],
}

impl Window {
    fn new(n: usize, hz: usize) -> Self {
        Window {
            x: vec![0; hz],
            y: vec![0; hz],
            h_prev: vec![0.0; hz * n],
            c_prev: vec![0.0; hz * n],
            gates: vec![0.0; hz * 4 * n],
            tanh_c: vec![0.0; hz * n],
            h_out: vec![0.0; hz * n],
            probs: vec![0.0; hz * 256],
            seen: [false; 256],
        }
    }
}

/// The recurrent state after the last byte.
#[derive(Debug, Clone)]
struct State {
    h: Vec<f32>,
    c: Vec<f32>,
    /// The previous byte (the next step's input).
    prev: u8,
}

/// One forward step: saves step `t` of `win` and returns its distribution.
fn forward<'a>(
    n: usize,
    w: WeightsRef<'_>,
    s: &mut State,
    win: &'a mut Window,
    t: usize,
) -> &'a [f32; 256] {
    let x = usize::from(s.prev);
    win.x[t] = s.prev;
    win.h_prev[t * n..(t + 1) * n].copy_from_slice(&s.h);
    win.c_prev[t * n..(t + 1) * n].copy_from_slice(&s.c);
    // Gate pre-activations: bias + input column + Wh h.
    let z = &mut win.gates[t * 4 * n..(t + 1) * 4 * n];
    for ((z, &b), &w) in z.iter_mut().zip(w.b).zip(&w.wx[x * 4 * n..(x + 1) * 4 * n]) {
        *z = b + w;
    }
    sep_kernels::serial_matvec_cols(w.wh, &s.h, z);
    // The slice forms: SIMD, the same bits as the scalar functions.
    sep_kernels::sigmoid_inplace(&mut z[..3 * n]);
    sep_kernels::tanh_inplace(&mut z[3 * n..]);
    let (ig, rest) = z.split_at(n);
    let (fg, rest) = rest.split_at(n);
    let (og, gg) = rest.split_at(n);
    let tc = &mut win.tanh_c[t * n..(t + 1) * n];
    for k in 0..n {
        let c = fg[k] * s.c[k] + ig[k] * gg[k];
        s.c[k] = c;
        tc[k] = c;
    }
    sep_kernels::tanh_inplace(tc);
    let ho = &mut win.h_out[t * n..(t + 1) * n];
    for k in 0..n {
        ho[k] = og[k] * tc[k];
    }
    s.h.copy_from_slice(ho);
    // Softmax over Wy h + by.
    let p = &mut win.probs[t * 256..(t + 1) * 256];
    p.copy_from_slice(w.by);
    sep_kernels::serial_matvec_cols(w.wy, &s.h, p);
    let max = p.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    for v in p.iter_mut() {
        *v -= max;
    }
    sep_kernels::exp_inplace(p);
    let sum = p.iter().fold(0.0f32, |a, &b| a + b);
    let inv = 1.0 / sum;
    for v in p.iter_mut() {
        *v *= inv;
    }
    (&*p).try_into().expect("256 probabilities")
}

/// The trained weights with Adam's state: the network of kinds 1 and 2,
/// kind 3's trainer.
#[derive(Debug, Clone)]
struct Trainer {
    n: usize,
    horizon: usize,
    lr: f32,
    /// Input weights, one column of `4n` gate inputs per byte value
    /// (gates in the order input, forget, output, candidate).
    wx: Param,
    /// Recurrent weights, column-major `4n x n`.
    wh: Param,
    /// Gate biases (`4n`).
    b: Param,
    /// Output weights, column-major `256 x n`, and biases (`256`).
    wy: Param,
    by: Param,
    /// Adam's bias-correction powers.
    b1t: f32,
    b2t: f32,
    /// Scratch for back-propagation.
    dz: Vec<f32>,
    dh: Vec<f32>,
    dh_next: Vec<f32>,
    dc_next: Vec<f32>,
    dlogits: Vec<f32>,
    /// Kinds 2 and 3: the learning rate decays with the trainings so far.
    decay: bool,
    trainings: u32,
    /// Trainings done (kind 3's weight copies are brought up to date by it).
    done: u64,
    /// Per input column, `done` after the last training that changed it.
    col_done: [u64; 256],
}

impl Trainer {
    fn new(config: &LstmConfig) -> Self {
        let n = usize::from(config.cells);
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let scale_h = 1.0 / (n as f32).sqrt();
        let mut b = Param::new(4 * n, 0.0, &mut rng);
        // Forget gates start open.
        b.w[n..2 * n].fill(1.0);
        Trainer {
            n,
            horizon: usize::from(config.horizon),
            lr: f32::from(config.lr) * 1e-4,
            wx: Param::new(256 * 4 * n, 0.1, &mut rng),
            wh: Param::new(4 * n * n, scale_h, &mut rng),
            b,
            wy: Param::new(256 * n, scale_h, &mut rng),
            by: Param::new(256, 0.0, &mut rng),
            b1t: 1.0,
            b2t: 1.0,
            dz: vec![0.0; 4 * n],
            dh: vec![0.0; n],
            dh_next: vec![0.0; n],
            dc_next: vec![0.0; n],
            dlogits: vec![0.0; 256],
            decay: config.kind >= 2,
            trainings: 0,
            done: 0,
            col_done: [0; 256],
        }
    }

    fn weights(&self) -> WeightsRef<'_> {
        WeightsRef {
            wx: &self.wx.w,
            wh: &self.wh.w,
            b: &self.b.w,
            wy: &self.wy.w,
            by: &self.by.w,
        }
    }

    /// Back-propagation through the window `win`, newest step first, with
    /// these weights, then one Adam step.
    fn train(&mut self, win: &mut Window) {
        let n = self.n;
        self.dh_next.fill(0.0);
        self.dc_next.fill(0.0);
        for t in (0..self.horizon).rev() {
            // Output layer.
            let p = &win.probs[t * 256..(t + 1) * 256];
            self.dlogits.copy_from_slice(p);
            self.dlogits[usize::from(win.y[t])] -= 1.0;
            let ho = &win.h_out[t * n..(t + 1) * n];
            for (gb, &d) in self.by.g.iter_mut().zip(&self.dlogits) {
                *gb += d;
            }
            sep_kernels::serial_outer_add(&mut self.wy.g, &self.dlogits, ho);
            sep_kernels::serial_dot_cols(
                &self.wy.w,
                &self.dlogits,
                Some(&self.dh_next),
                &mut self.dh,
            );
            // Cell.
            let z = &win.gates[t * 4 * n..(t + 1) * 4 * n];
            let tc = &win.tanh_c[t * n..(t + 1) * n];
            let cp = &win.c_prev[t * n..(t + 1) * n];
            for k in 0..n {
                let (i, f, o, g) = (z[k], z[n + k], z[2 * n + k], z[3 * n + k]);
                let dh = self.dh[k];
                let dc = dh * o * (1.0 - tc[k] * tc[k]) + self.dc_next[k];
                self.dz[k] = dc * g * i * (1.0 - i);
                self.dz[n + k] = dc * cp[k] * f * (1.0 - f);
                self.dz[2 * n + k] = dh * tc[k] * o * (1.0 - o);
                self.dz[3 * n + k] = dc * i * (1.0 - g * g);
                self.dc_next[k] = dc * f;
            }
            // Gate weights and the gradient into the previous output.
            let x = usize::from(win.x[t]);
            for (g, &d) in self.b.g.iter_mut().zip(&self.dz) {
                *g += d;
            }
            for (g, &d) in self.wx.g[x * 4 * n..(x + 1) * 4 * n]
                .iter_mut()
                .zip(&self.dz)
            {
                *g += d;
            }
            let hp = &win.h_prev[t * n..(t + 1) * n];
            sep_kernels::serial_outer_add(&mut self.wh.g, &self.dz, hp);
            sep_kernels::serial_dot_cols(&self.wh.w, &self.dz, None, &mut self.dh_next);
        }
        self.b1t *= 0.9;
        self.b2t *= 0.999;
        let mut lr = self.lr;
        if self.decay {
            // Kind 2 (doc/FORMAT.md 4.13.1): from twice the rate towards
            // half of it, 1.25 times after 1024 trainings.
            let t = self.trainings as f32;
            lr = self.lr * (0.5 + 1.5 * (1024.0 / (1024.0 + t)));
            self.trainings = self.trainings.saturating_add(1);
        }
        let step = lr * (1.0 - self.b2t).sqrt() / (1.0 - self.b1t);
        let all = |p: &Param| 0..p.w.len();
        let (r_wh, r_b, r_wy, r_by) = (all(&self.wh), all(&self.b), all(&self.wy), all(&self.by));
        self.wh.adam(r_wh, step);
        self.b.adam(r_b, step);
        self.wy.adam(r_wy, step);
        self.by.adam(r_by, step);
        self.done += 1;
        // Only the input columns of bytes in the window have gradients.
        for x in 0..256 {
            if std::mem::take(&mut win.seen[x]) {
                self.wx.adam(x * 4 * n..(x + 1) * 4 * n, step);
                self.col_done[x] = self.done;
            }
        }
    }

    /// Brings the copy `net` up to these weights (copying only the input
    /// columns changed since the copy was last brought up to date).
    fn copy_to(&self, net: &mut Weights) {
        let n4 = 4 * self.n;
        net.wh.copy_from_slice(&self.wh.w);
        net.b.copy_from_slice(&self.b.w);
        net.wy.copy_from_slice(&self.wy.w);
        net.by.copy_from_slice(&self.by.w);
        for x in 0..256 {
            if self.col_done[x] > net.done {
                let r = x * n4..(x + 1) * n4;
                net.wx[r.clone()].copy_from_slice(&self.wx.w[r]);
            }
        }
        net.done = self.done;
    }
}

/// A copy of the weights (kind 3: the predictor's, and one per training in
/// flight), as they were after `done` trainings.
#[derive(Debug, Clone)]
struct Weights {
    wx: Vec<f32>,
    wh: Vec<f32>,
    b: Vec<f32>,
    wy: Vec<f32>,
    by: Vec<f32>,
    done: u64,
}

impl Weights {
    fn of(t: &Trainer) -> Self {
        Weights {
            wx: t.wx.w.clone(),
            wh: t.wh.w.clone(),
            b: t.b.w.clone(),
            wy: t.wy.w.clone(),
            by: t.by.w.clone(),
            done: t.done,
        }
    }

    fn as_ref(&self) -> WeightsRef<'_> {
        WeightsRef {
            wx: &self.wx,
            wh: &self.wh,
            b: &self.b,
            wy: &self.wy,
            by: &self.by,
        }
    }
}

/// A training in flight: its window and, once trained, the weights to
/// install.
#[derive(Debug, Clone)]
struct Slot {
    win: Window,
    net: Weights,
}

/// Progress of kind 3's trainings.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// Windows handed to the trainer.
    queued: u64,
    /// Windows trained (their weights are in their slots).
    trained: u64,
    /// The predictor is gone: the trainer thread ends.
    stop: bool,
    /// The trainer thread ended (panicked) before `stop`.
    dead: bool,
}

/// What kind 3's predictor and trainer share.
#[derive(Debug)]
struct Shared {
    slots: Vec<Mutex<Slot>>,
    /// The trainer (locked while it trains; the thread's or the inline one).
    trainer: Mutex<Trainer>,
    progress: Mutex<Progress>,
    /// Signalled when a window is queued or `stop` is set.
    work: Condvar,
    /// Signalled when a window is trained or the trainer ends.
    trained: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock is re-raised by the predictor through
    // `dead`; the data behind a poisoned lock is never used after it.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Trains window `k` (all earlier ones are trained) into its slot.
    fn train(&self, k: u64) {
        let mut trainer = lock(&self.trainer);
        let mut slot = lock(&self.slots[(k % self.slots.len() as u64) as usize]);
        let slot = &mut *slot;
        trainer.train(&mut slot.win);
        trainer.copy_to(&mut slot.net);
    }

    /// The trainer thread: trains the queued windows in order.
    fn run(&self) {
        struct Ends<'a>(&'a Shared);
        impl Drop for Ends<'_> {
            fn drop(&mut self) {
                lock(&self.0.progress).dead = true;
                self.0.trained.notify_all();
            }
        }
        let _ends = Ends(self);
        let mut k = lock(&self.progress).trained;
        loop {
            {
                let mut p = lock(&self.progress);
                while p.queued == k && !p.stop {
                    p = self.work.wait(p).unwrap_or_else(PoisonError::into_inner);
                }
                if p.stop {
                    return;
                }
            }
            self.train(k);
            k += 1;
            lock(&self.progress).trained = k;
            self.trained.notify_one();
        }
    }
}

/// Kind 3's delayed training (doc/FORMAT.md 4.13.2).
#[derive(Debug)]
struct Delayed {
    delay: u64,
    /// The weights the predictor uses.
    net: Weights,
    shared: Arc<Shared>,
    /// Bytes learned.
    bytes: u64,
    /// Windows handed to the trainer, and whose weights were installed.
    queued: u64,
    installed: u64,
    /// The trainer thread, if any (else trainings run inline).
    thread: Option<JoinHandle<()>>,
}

impl Delayed {
    fn new(config: &LstmConfig, trainer: Trainer, threaded: bool) -> Self {
        let n = usize::from(config.cells);
        let hz = usize::from(config.horizon);
        let net = Weights::of(&trainer);
        let slots = (0..config.slots())
            .map(|_| {
                Mutex::new(Slot {
                    win: Window::new(n, hz),
                    net: net.clone(),
                })
            })
            .collect();
        let shared = Arc::new(Shared {
            slots,
            trainer: Mutex::new(trainer),
            progress: Mutex::new(Progress::default()),
            work: Condvar::new(),
            trained: Condvar::new(),
        });
        let mut d = Delayed {
            delay: u64::from(config.delay),
            net,
            shared,
            bytes: 0,
            queued: 0,
            installed: 0,
            thread: None,
        };
        if threaded {
            d.start();
        }
        d
    }

    fn start(&mut self) {
        let shared = Arc::clone(&self.shared);
        self.thread = std::thread::Builder::new()
            .name("sep-lstm-trainer".into())
            .spawn(move || shared.run())
            .ok();
    }

    /// Hands the full window `win` to the trainer (taking back a free one).
    fn queue(&mut self, win: &mut Window) {
        let k = self.queued;
        let s = &self.shared;
        std::mem::swap(
            &mut lock(&s.slots[(k % s.slots.len() as u64) as usize]).win,
            win,
        );
        self.queued = k + 1;
        if self.thread.is_some() {
            lock(&s.progress).queued = k + 1;
            s.work.notify_one();
        }
    }

    /// Installs window `installed`'s weights, training it first if inline
    /// or waiting for the trainer if it is late.
    fn install(&mut self) {
        let k = self.installed;
        let s = &self.shared;
        if self.thread.is_some() {
            let mut p = lock(&s.progress);
            while p.trained <= k {
                assert!(!p.dead, "the LSTM trainer thread ended");
                p = s.trained.wait(p).unwrap_or_else(PoisonError::into_inner);
            }
        } else {
            s.train(k);
        }
        std::mem::swap(
            &mut lock(&s.slots[(k % s.slots.len() as u64) as usize]).net,
            &mut self.net,
        );
        self.installed = k + 1;
    }

    /// After each byte: `full` when it completed a window.
    fn after_byte(&mut self, win: &mut Window, full: bool) {
        self.bytes += 1;
        if full {
            self.queue(win);
        }
        let hz = win.x.len() as u64;
        if self.installed < self.queued && self.bytes == (self.installed + 1) * hz + self.delay {
            self.install();
        }
    }

    /// Waits until the trainer thread has trained every queued window.
    fn settle(&self) {
        if self.thread.is_some() {
            let s = &self.shared;
            let mut p = lock(&s.progress);
            while p.trained < self.queued {
                assert!(!p.dead, "the LSTM trainer thread ended");
                p = s.trained.wait(p).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

impl Clone for Delayed {
    fn clone(&self) -> Self {
        self.settle();
        let s = &self.shared;
        let p = *lock(&s.progress);
        let shared = Arc::new(Shared {
            slots: s
                .slots
                .iter()
                .map(|m| Mutex::new(lock(m).clone()))
                .collect(),
            trainer: Mutex::new(lock(&s.trainer).clone()),
            progress: Mutex::new(Progress {
                stop: false,
                dead: false,
                ..p
            }),
            work: Condvar::new(),
            trained: Condvar::new(),
        });
        let mut d = Delayed {
            delay: self.delay,
            net: self.net.clone(),
            shared,
            bytes: self.bytes,
            queued: self.queued,
            installed: self.installed,
            thread: None,
        };
        if self.thread.is_some() {
            d.start();
        }
        d
    }
}

impl Drop for Delayed {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            lock(&self.shared.progress).stop = true;
            self.shared.work.notify_one();
            let _ = t.join();
        }
    }
}

/// How the network trains.
#[derive(Debug, Clone)]
enum Training {
    /// Kinds 1 and 2: at the end of each window, before the next byte.
    Now(Box<Trainer>),
    /// Kind 3: on the delayed schedule of doc/FORMAT.md 4.13.2.
    Delayed(Box<Delayed>),
}

/// The LSTM predictor. [`predict`](Self::predict) before each byte,
/// [`update`](Self::update) with the byte after it.
#[derive(Debug, Clone)]
pub struct Lstm {
    n: usize,
    horizon: usize,
    state: State,
    /// The window being filled and its steps so far.
    win: Window,
    steps: usize,
    training: Training,
}

impl Lstm {
    /// A fresh network (`config` must be valid). Kind 3 trains on a second
    /// thread when the kernels may use two or more
    /// (`sep_kernels::num_threads`), else inline: the same bits.
    pub fn new(config: &LstmConfig) -> Self {
        Self::with_trainer_thread(config, sep_kernels::num_threads() >= 2)
    }

    /// A fresh network; kind 3 trains on its own thread if `threaded` (and
    /// the thread starts), else inline. Kinds 1 and 2 ignore `threaded`.
    pub fn with_trainer_thread(config: &LstmConfig, threaded: bool) -> Self {
        config.validate().expect("valid LSTM configuration");
        let n = usize::from(config.cells);
        let hz = usize::from(config.horizon);
        let trainer = Trainer::new(config);
        let training = if config.kind >= 3 {
            Training::Delayed(Box::new(Delayed::new(config, trainer, threaded)))
        } else {
            Training::Now(Box::new(trainer))
        };
        Lstm {
            n,
            horizon: hz,
            state: State {
                h: vec![0.0; n],
                c: vec![0.0; n],
                prev: 0,
            },
            win: Window::new(n, hz),
            steps: 0,
            training,
        }
    }

    /// Whether a kind-3 network trains on its own thread.
    pub fn trains_on_thread(&self) -> bool {
        matches!(&self.training, Training::Delayed(d) if d.thread.is_some())
    }

    /// The distribution of the next byte (256 probabilities summing to
    /// about 1), computed from the bytes given to [`update`](Self::update)
    /// so far.
    pub fn predict(&mut self) -> &[f32; 256] {
        let w = match &self.training {
            Training::Now(t) => t.weights(),
            Training::Delayed(d) => d.net.as_ref(),
        };
        forward(self.n, w, &mut self.state, &mut self.win, self.steps)
    }

    /// Learns the byte that followed the last [`predict`](Self::predict);
    /// trains when the window is full (kind 3: hands it to the trainer and
    /// installs trained weights when due).
    pub fn update(&mut self, byte: u8) {
        self.win.y[self.steps] = byte;
        self.win.seen[usize::from(self.win.x[self.steps])] = true;
        self.state.prev = byte;
        self.steps += 1;
        let full = self.steps == self.horizon;
        if full {
            self.steps = 0;
        }
        match &mut self.training {
            Training::Now(t) => {
                if full {
                    t.train(&mut self.win);
                }
            }
            Training::Delayed(d) => d.after_byte(&mut self.win, full),
        }
    }
}

/// The LSTM as inputs of the context-mixing model: per byte its
/// distribution, quantised as the coder's tables are, and its most likely
/// byte; per bit two mixer inputs and a weight-set selector context
/// (doc/FORMAT.md section 4.13).
#[derive(Debug, Clone)]
pub(crate) struct SerialInput {
    net: Lstm,
    table: FreqTable,
    /// The most likely byte and its probability in eighths (`0..=7`).
    top: u32,
    confidence: usize,
    /// Refines the network's bit probability by the partial byte.
    apm: Apm,
    /// Kinds 1-3: the mixer has a weight-set selector for the network
    /// (kind 4: none).
    selector: bool,
}

impl SerialInput {
    /// Mixer inputs added per bit.
    pub(crate) const INPUTS: usize = 2;
    /// Weight sets of the selector: whether the partial byte still agrees
    /// with the most likely byte and which bit that predicts (3), times the
    /// confidence (8), times the bit position (8).
    pub(crate) const SELECTOR: usize = 3 * 8 * 8;

    /// Whether the mixer takes a weight set chosen by [`Self::inputs`]'s
    /// context (kinds 1-3; kind 4 has none).
    pub(crate) fn has_selector(&self) -> bool {
        self.selector
    }

    /// Whether the mixer's weights of the network's inputs start at 0
    /// (kind 4, doc/FORMAT.md 4.13.3) instead of the model's initial weight.
    pub(crate) fn quiet_start(&self) -> bool {
        !self.selector
    }

    pub(crate) fn new(config: &LstmConfig) -> Self {
        SerialInput {
            net: Lstm::new(config),
            table: FreqTable::default(),
            top: 0,
            confidence: 0,
            apm: Apm::new(256, 7),
            selector: config.kind < 4,
        }
    }

    /// Predicts the byte about to be coded.
    pub(crate) fn begin_byte(&mut self) {
        let p = self.net.predict();
        quantize(p, &mut self.table);
        let (mut top, mut best) = (0u32, 0u32);
        for s in 0..256u32 {
            let f = self.table.cum(s as usize + 1) - self.table.cum(s as usize);
            if f > best {
                (top, best) = (s, f);
            }
        }
        self.top = top;
        self.confidence = (best >> 21).min(7) as usize;
    }

    /// Writes the inputs for bit `i` (`c0`: the bits so far with a leading
    /// 1) to `out` and returns the selector context.
    #[inline]
    pub(crate) fn inputs(&mut self, c0: u32, i: u32, out: &mut [i32; Self::INPUTS]) -> usize {
        let x = neural_input(&self.table, c0, i);
        out[0] = x;
        out[1] = stretch(self.apm.refine_stretched(x, c0 as usize));
        let agrees = (self.top | 0x100) >> (i + 1) == c0;
        let expected = if agrees {
            1 + ((self.top >> i) & 1) as usize
        } else {
            0
        };
        (expected * 8 + self.confidence) * 8 + i as usize
    }

    /// Learns the coded bit.
    #[inline]
    pub(crate) fn update_bit(&mut self, bit: u32) {
        self.apm.update(bit);
    }

    /// Learns the coded byte.
    pub(crate) fn end_byte(&mut self, byte: u8) {
        self.net.update(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LstmConfig {
        LstmConfig {
            kind: 1,
            cells: 16,
            horizon: 10,
            lr: 200,
            delay: 0,
        }
    }

    /// Mean code length in bits per byte of `data` under the network.
    fn bits(data: &[u8], c: &LstmConfig) -> f64 {
        let mut net = Lstm::new(c);
        let mut total = 0.0f64;
        for &b in data {
            let p = net.predict();
            let s: f32 = p.iter().sum();
            assert!((s - 1.0).abs() < 1e-3, "probabilities sum to {s}");
            total -= f64::from(p[usize::from(b)].max(1e-9)).log2();
            net.update(b);
        }
        total / data.len() as f64
    }

    #[test]
    fn learns_a_repeating_text() {
        let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog. "
            .iter()
            .cycle()
            .take(20_000)
            .copied()
            .collect();
        let early = bits(&text[..2000], &config());
        let all = bits(&text, &config());
        // Untrained: 8 bits a byte. It must learn the 45-byte cycle far
        // below order 0's 4.2 bits.
        assert!(early > 3.0, "{early}");
        assert!(all < 1.0, "{all}");
    }

    #[test]
    fn identical_runs_give_identical_bits() {
        let data: Vec<u8> = (0..3000u32).map(|i| (i * i % 251) as u8).collect();
        let run = || {
            let mut net = Lstm::new(&config());
            let mut h = 0u64;
            for &b in &data {
                for &p in net.predict().iter() {
                    h = h.rotate_left(5) ^ u64::from(p.to_bits());
                }
                net.update(b);
            }
            h
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn config_validates() {
        // The archive form is sep::params's (crates/sep/tests/params.rs).
        let c = config();
        assert!(c.validate().is_ok());
        assert!(
            LstmConfig { horizon: 0, ..c }
                .validate()
                .unwrap_err()
                .contains("horizon")
        );
        assert!(LstmConfig { cells: 12, ..c }.validate().is_err());
        assert_eq!(c.parameters(), 4 * 16 * (256 + 16 + 1) + 256 * 17);
    }
}
