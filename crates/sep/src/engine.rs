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
use sep_coder::{Coder, Decoder as RangeDecoder, Encoder as RangeEncoder, FreqTable, quantize};
use sep_model::{Backbone, Param};
use sep_nn::{Adam, CrossEntropy, Module};

/// Lets [`Adam`] walk a backbone's parameters.
struct AsModule<'a>(&'a mut dyn Backbone);

impl Module for AsModule<'_> {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.0.visit_params(f);
    }
}

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

/// Codes (or decodes) `data` in place through one coder per stream.
///
/// With encoders, `data` is the block; with decoders, `data` is overwritten
/// with the decoded block.
fn run<C: Coder>(config: &NeuralConfig, seed: u64, data: &mut [u8], coders: &mut [C]) {
    let layout = StreamLayout::new(data.len(), coders.len());
    let streams = layout.streams;
    let mut model = config.backbone.build(streams, seed);
    let l = model.context();
    let mut adam = Adam::new(config.adam);
    let mut ce = CrossEntropy::new(256, streams);
    let mut ctx = vec![0u8; streams * l];
    let mut targets = vec![0u8; streams];
    let mut table = FreqTable::default();
    let steps = layout.steps();
    for t in 0..steps {
        let k = layout.active(t);
        if t > 0 && l > 0 {
            // Slide each context window by the byte coded at the last step.
            for (s, row) in ctx.chunks_exact_mut(l).take(k).enumerate() {
                row.copy_within(1.., 0);
                row[l - 1] = targets[s];
            }
        }
        let logits = model.forward(&ctx[..k * l], k);
        let probs = ce.predict(logits);
        for (s, (coder, row)) in coders
            .iter_mut()
            .zip(probs.chunks_exact(256))
            .enumerate()
            .take(k)
        {
            let row: &[f32; 256] = row.try_into().expect("256 probabilities per row");
            quantize(row, &mut table);
            let pos = layout.start(s) + t;
            let byte = coder.code_symbol(u32::from(data[pos]), &table) as u8;
            data[pos] = byte;
            targets[s] = byte;
        }
        if t + 1 < steps {
            ce.loss(&targets[..k]);
            let dlogits = ce.backward();
            model.backward(dlogits);
            adam.step(&mut AsModule(model.as_mut()));
        }
    }
}

/// Codes a block into `streams` streams.
pub(crate) fn encode_block(
    config: &NeuralConfig,
    seed: u64,
    raw: &[u8],
    streams: usize,
) -> Vec<Vec<u8>> {
    let mut coders: Vec<RangeEncoder> = (0..streams)
        .map(|_| RangeEncoder::with_capacity(raw.len() / streams / 2 + 16))
        .collect();
    let mut data = raw.to_vec();
    run(config, seed, &mut data, &mut coders);
    coders.into_iter().map(RangeEncoder::finish).collect()
}

/// Decodes a block from its streams into `out`.
pub(crate) fn decode_block(config: &NeuralConfig, seed: u64, streams: &[&[u8]], out: &mut [u8]) {
    let mut coders: Vec<RangeDecoder> = streams.iter().map(|s| RangeDecoder::new(s)).collect();
    run(config, seed, out, &mut coders);
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
                // Active streams are a prefix and never grow.
                assert!((1..l.steps()).all(|t| l.active(t) <= l.active(t - 1)));
            }
        }
    }
}
