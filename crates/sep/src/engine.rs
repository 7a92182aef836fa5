//! The neural engine: SEP's compression loop, one code path for both
//! directions.
//!
//! A block of `n` bytes is cut into `S` contiguous streams; stream `s` holds
//! `n / S` bytes, plus one for the first `n % S` streams, so no byte is ever
//! left out. One step predicts the next byte of every stream still running
//! (always a prefix `0..k` of the streams): forward on the `k` contexts (the
//! last `L` bytes of each stream, zeros before its start), softmax,
//! [`sep_coder::quantize`], code each stream's byte with that stream's range
//! coder, then cross-entropy (mean over the `k` rows), backward, one Adam step.
//! The decoder runs the very same function with range decoders, so it sees
//! the same probabilities, and learns from the bytes it has just decoded.
//!
//! Unlike the reference code, no byte is coded with a uniform table: the
//! first bytes of a stream are predicted from a zero-padded context.
//!
//! Nothing in the step loop allocates: the backbone, the optimiser state and
//! every buffer are created once per block.

use crate::neural::NeuralConfig;
use crate::pipeline::Cancel;
use sep_cm::{Cm, CmConfig, CmStream, FastCm, LstmConfig, Sequential, Visibility};
use sep_coder::{Coder, Decoder as RangeDecoder, Encoder as RangeEncoder, FreqTable, quantize};
use sep_model::Trainer;

/// Where each stream starts and how long it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamLayout {
    /// Bytes in streams `rem..S`; streams `0..rem` hold one more.
    base: usize,
    rem: usize,
    streams: usize,
}

impl StreamLayout {
    /// `streams` streams over `n` bytes (`1 <= streams <= n`).
    pub(crate) fn new(n: usize, streams: usize) -> Self {
        assert!(
            streams >= 1 && streams <= n.max(1),
            "stream count {streams} for {n} bytes"
        );
        StreamLayout {
            base: n / streams,
            rem: n % streams,
            streams,
        }
    }

    fn start(&self, s: usize) -> usize {
        s * self.base + s.min(self.rem)
    }

    /// The stream holding block position `pos`, and `pos`'s offset in it.
    #[inline]
    fn locate(&self, pos: usize) -> (usize, usize) {
        let long = self.rem * (self.base + 1);
        if pos < long {
            (pos / (self.base + 1), pos % (self.base + 1))
        } else {
            let q = pos - long;
            (self.rem + q / self.base, q % self.base)
        }
    }

    /// Number of steps: the length of the longest stream.
    fn steps(&self) -> usize {
        self.base + usize::from(self.rem > 0)
    }

    /// Streams still running at step `t`.
    fn active(&self, t: usize) -> usize {
        if t < self.base {
            self.streams
        } else {
            self.rem
        }
    }
}

/// The stream count the encoder uses for a block of `n` bytes.
pub(crate) fn stream_count(config: &NeuralConfig, n: usize) -> usize {
    (n / config.min_stream_len.max(1) as usize)
        .clamp(1, config.streams as usize)
        .min(n.max(1))
}

/// The decoder's view of a block at step `t` while coding stream `s`: the
/// first `t` bytes of every stream, and byte `t` of streams before `s`.
struct Frontier<'a> {
    layout: &'a StreamLayout,
    t: usize,
    s: usize,
}

impl Visibility for Frontier<'_> {
    #[inline]
    fn known(&self, pos: usize) -> bool {
        let (s, offset) = self.layout.locate(pos);
        offset < self.t + usize::from(s < self.s)
    }
}

/// Codes (or decodes) `data` in place through one coder per stream, with a
/// network, a context-mixing model, or both (the network's distribution then
/// is one of the mixer's inputs).
///
/// With encoders, `data` is the block (left as it is); with decoders, `data`
/// is overwritten with the decoded block. Returns early, with the coders'
/// state incomplete, when `cancel` is set.
fn run<C: Coder>(
    neural: Option<&NeuralConfig>,
    cm: Option<&CmConfig>,
    serial: Option<&LstmConfig>,
    seed: u64,
    data: &mut [u8],
    coders: &mut [C],
    cancel: &Cancel,
) {
    assert!(neural.is_some() || cm.is_some(), "a block needs a model");
    if let Some(c) = cm.filter(|c| c.revision == 3) {
        assert!(
            neural.is_none() && serial.is_none() && coders.len() == 1,
            "CM revision 3 codes a block as one stream"
        );
        return run_fast(c, data, &mut coders[0], cancel);
    }
    let layout = StreamLayout::new(data.len(), coders.len());
    let streams = layout.streams;
    let mut net = neural.map(|c| Trainer::from_config(&c.backbone, c.adam, streams, seed));
    let mut mixer = cm.map(|c| {
        (
            match serial {
                Some(s) => Cm::new(c, false, data.len()).with_lstm(s),
                None => Cm::new(c, net.is_some(), data.len()),
            },
            (0..streams)
                .map(|s| CmStream::new(layout.start(s)))
                .collect::<Vec<_>>(),
        )
    });
    let mut targets = vec![0u8; streams];
    let mut table = FreqTable::default();
    let steps = layout.steps();
    // Bytes coded since the last report to `cancel` (every 256 steps: one
    // shared atomic add per 256 steps, not per byte).
    let mut unreported = 0u64;
    for t in 0..steps {
        if cancel.is_set() {
            return;
        }
        let k = layout.active(t);
        let probs = net.as_mut().map(|n| n.predict(t, k, &targets));
        for (s, coder) in coders.iter_mut().enumerate().take(k) {
            if let Some(p) = probs {
                let row: &[f32; 256] = p[s * 256..(s + 1) * 256]
                    .try_into()
                    .expect("256 probabilities per row");
                quantize(row, &mut table);
            }
            let pos = layout.start(s) + t;
            let byte = match mixer.as_mut() {
                Some((cm, histories)) => {
                    let vis = Frontier {
                        layout: &layout,
                        t,
                        s,
                    };
                    cm.code_byte(
                        coder,
                        &mut histories[s],
                        data,
                        pos,
                        &vis,
                        probs.map(|_| &table),
                    )
                }
                None => {
                    let b = coder.code_symbol(u32::from(data[pos]), &table) as u8;
                    data[pos] = b;
                    b
                }
            };
            targets[s] = byte;
        }
        if let Some(n) = net.as_mut()
            && t + 1 < steps
        {
            n.learn(&targets[..k]);
        }
        unreported += k as u64;
        if t % 256 == 255 || t + 1 == steps {
            cancel.advance(std::mem::take(&mut unreported));
        }
    }
}

/// Calls `code` for every position of `range` in chunks of 4096, checking
/// `cancel` before each chunk and reporting each chunk's bytes to it (one
/// shared atomic add per chunk, not per byte). Returns `false` when
/// cancelled.
fn chunked(range: std::ops::Range<usize>, cancel: &Cancel, mut code: impl FnMut(usize)) -> bool {
    let mut pos = range.start;
    while pos < range.end {
        if cancel.is_set() {
            return false;
        }
        let end = (pos + 4096).min(range.end);
        (pos..end).for_each(&mut code);
        cancel.advance((end - pos) as u64);
        pos = end;
    }
    true
}

/// CM revision 3 (`sep_cm::FastCm`, doc/FORMAT.md section 4.14): the block
/// as one stream, byte after byte.
fn run_fast<C: Coder>(config: &CmConfig, data: &mut [u8], coder: &mut C, cancel: &Cancel) {
    let mut model = FastCm::new(config, data.len());
    chunked(0..data.len(), cancel, |p| {
        model.code_byte(coder, data, p);
    });
}

/// Codes (or decodes) `data` in place as the continuation of `prior`'s
/// samples: the trained model, restored, codes positions `h..h + n` of the
/// history followed by the block, as one stream (doc/FORMAT.md section 11).
fn run_prior<C: Coder>(prior: &crate::Prior, data: &mut [u8], coder: &mut C, cancel: &Cancel) {
    let trained = prior.restore();
    let history = prior.history();
    let h = history.len();
    let mut buf = Vec::with_capacity(h + data.len());
    buf.extend_from_slice(history);
    buf.extend_from_slice(data);
    let n = buf.len();
    let done = match trained {
        crate::prior::Trained::Cm(mut cm, mut st) => chunked(h..n, cancel, |pos| {
            cm.code_byte(coder, &mut st, &mut buf, pos, &Sequential(pos), None);
        }),
        // CM revision 3 (the `fast` preset).
        crate::prior::Trained::Fast(mut m) => chunked(h..n, cancel, |pos| {
            m.code_byte(coder, &mut buf, pos);
        }),
    };
    if done {
        data.copy_from_slice(&buf[h..]);
    }
}

/// Codes a block with a prior into one stream.
pub(crate) fn encode_prior(prior: &crate::Prior, raw: &mut [u8], cancel: &Cancel) -> Vec<u8> {
    let mut coder = RangeEncoder::with_capacity(raw.len() / 4 + 16);
    run_prior(prior, raw, &mut coder, cancel);
    coder.finish()
}

/// Decodes a block coded with a prior; `Err` says what is wrong with the
/// stream's end (as [`decode_block`]).
pub(crate) fn decode_prior(
    prior: &crate::Prior,
    stream: &[u8],
    out: &mut [u8],
    cancel: &Cancel,
) -> Result<(), String> {
    let mut coder = RangeDecoder::new(stream);
    run_prior(prior, out, &mut coder, cancel);
    if cancel.is_set() {
        return Ok(());
    }
    coder.check_finished()
}

/// Codes a block into `streams` streams. `raw` is left as it is (the models
/// write each byte back as they code it).
pub(crate) fn encode_block(
    neural: Option<&NeuralConfig>,
    cm: Option<&CmConfig>,
    serial: Option<&LstmConfig>,
    seed: u64,
    raw: &mut [u8],
    streams: usize,
    cancel: &Cancel,
) -> Vec<Vec<u8>> {
    let mut coders: Vec<RangeEncoder> = (0..streams)
        .map(|_| RangeEncoder::with_capacity(raw.len() / streams / 2 + 16))
        .collect();
    run(neural, cm, serial, seed, raw, &mut coders, cancel);
    coders.into_iter().map(RangeEncoder::finish).collect()
}

/// Decodes a block from its streams into `out`. Then checks that every stream
/// is exactly what an encoder writes ([`RangeDecoder::check_finished`]): `Err`
/// names the first that is not, and what is wrong with it.
pub(crate) fn decode_block(
    neural: Option<&NeuralConfig>,
    cm: Option<&CmConfig>,
    serial: Option<&LstmConfig>,
    seed: u64,
    streams: &[&[u8]],
    out: &mut [u8],
    cancel: &Cancel,
) -> Result<(), (usize, String)> {
    let mut coders: Vec<RangeDecoder> = streams.iter().map(|s| RangeDecoder::new(s)).collect();
    run(neural, cm, serial, seed, out, &mut coders, cancel);
    if cancel.is_set() {
        return Ok(());
    }
    for (i, c) in coders.iter().enumerate() {
        c.check_finished().map_err(|why| (i, why))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_covers_every_byte_once() {
        for n in 1..60 {
            for s in 1..=n.min(9) {
                let l = StreamLayout::new(n, s);
                let mut seen = vec![0u8; n];
                for t in 0..l.steps() {
                    for st in 0..l.active(t) {
                        seen[l.start(st) + t] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "n {n} streams {s}");
                for st in 0..s {
                    for off in 0..(l.base + usize::from(st < l.rem)) {
                        assert_eq!(l.locate(l.start(st) + off), (st, off));
                    }
                }
                // Active streams are a prefix and never grow.
                assert!((1..l.steps()).all(|t| l.active(t) <= l.active(t - 1)));
            }
        }
    }
}
