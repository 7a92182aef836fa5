//! The decoding side of [`crate::SepDecompressor`]: a [`sep::Decoder`] on a
//! thread of its own, fed through a queue the caller fills, and the state the
//! two share.

use super::*;

/// What the decoding thread of a [`SepDecompressor`] and the caller share.
#[derive(Default)]
pub(crate) struct Shared {
    /// Archive bytes not yet read by the decoder.
    pub(crate) input: VecDeque<u8>,
    /// No more input will come (the archive's end record was forwarded).
    pub(crate) closed: bool,
    /// The decoder waits for input.
    pub(crate) waiting: bool,
    /// Decoded bytes not yet returned.
    pub(crate) output: VecDeque<u8>,
    /// The decoder stops producing output while `output` holds this much.
    pub(crate) cap: usize,
    /// The decoding thread has ended (`error` says how).
    pub(crate) finished: bool,
    pub(crate) error: Option<String>,
    /// The Python object is gone: the thread stops at its next read.
    pub(crate) abandoned: bool,
}

pub(crate) type Link = Arc<(Mutex<Shared>, Condvar)>;

/// The decoder's input: blocks until the caller forwards bytes or closes.
pub(crate) struct QueueReader(Link);

impl Read for QueueReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (m, cv) = &*self.0;
        let mut s = lock(m);
        loop {
            if s.abandoned {
                return Err(io::Error::other("decompressor dropped"));
            }
            if !s.input.is_empty() {
                let n = buf.len().min(s.input.len());
                for (b, x) in buf.iter_mut().zip(s.input.drain(..n)) {
                    *b = x;
                }
                return Ok(n);
            }
            if s.closed {
                return Ok(0);
            }
            s.waiting = true;
            cv.notify_all();
            s = cv.wait(s).unwrap_or_else(|p| p.into_inner());
            s.waiting = false;
        }
    }
}

/// Runs one archive's decoder, handing its output to the caller.
pub(crate) fn decode_thread(link: Link, max_output: Option<u64>) {
    let (m, cv) = &*link;
    let result = (|| -> sep::Result<()> {
        let mut dec = sep::Decoder::new(QueueReader(link.clone()))?
            .with_pipeline(false)
            .with_max_output(max_output);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            {
                let mut s = lock(m);
                while s.output.len() >= s.cap && !s.abandoned {
                    s = cv.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                if s.abandoned {
                    return Ok(());
                }
            }
            let n = dec.read(&mut buf).map_err(sep::Error::from_io)?;
            if n == 0 {
                return Ok(());
            }
            lock(m).output.extend(&buf[..n]);
            cv.notify_all();
        }
    })();
    let mut s = lock(m);
    s.finished = true;
    s.error = result.err().map(|e| e.to_string());
    cv.notify_all();
}

/// Where the framing of the archive being fed stands: the decompressor finds
/// the end of the archive itself (header, block headers with their payload
/// lengths, the end record) so that it can stop there, as `lzma` does, and
/// leave what follows in `unused_data`.
pub(crate) enum Frame {
    /// Before the header (magic included).
    Header,
    /// Inside the blocks; the payload bytes of the current block still to
    /// forward.
    Blocks(sep::format::Header, u64),
    /// After the end record.
    Done,
}

/// The caller's side of a [`SepDecompressor`].
pub(crate) struct DecState {
    pub(crate) frame: Frame,
    /// Fed bytes not yet forwarded (an incomplete header or block header).
    pub(crate) pending: Vec<u8>,
    pub(crate) unused: Vec<u8>,
    pub(crate) thread: Option<std::thread::JoinHandle<()>>,
    pub(crate) error: Option<String>,
}

/// Whether an error only says that more input is needed.
pub(crate) fn is_truncated(e: &sep::Error) -> bool {
    matches!(e, sep::Error::Truncated { .. })
}

impl DecState {
    /// Moves complete structures from `pending` to the decoder's input;
    /// returns the bytes to forward and whether the end record was reached.
    pub(crate) fn frame(&mut self) -> sep::Result<(Vec<u8>, bool)> {
        let mut forward = Vec::new();
        loop {
            match &mut self.frame {
                Frame::Done => {
                    self.unused.append(&mut self.pending);
                    return Ok((forward, true));
                }
                Frame::Header => {
                    let mut c = Cursor::new(&self.pending[..]);
                    match sep::read_header(&mut c) {
                        Ok(h) => {
                            let n = c.position() as usize;
                            forward.extend(self.pending.drain(..n));
                            self.frame = Frame::Blocks(h, 0);
                        }
                        Err(e) if is_truncated(&e) => return Ok((forward, false)),
                        Err(e) => return Err(e),
                    }
                }
                Frame::Blocks(h, left) => {
                    if *left > 0 {
                        let n = (*left).min(self.pending.len() as u64) as usize;
                        forward.extend(self.pending.drain(..n));
                        *left -= n as u64;
                        if *left > 0 {
                            return Ok((forward, false));
                        }
                    }
                    let mut c = Cursor::new(&self.pending[..]);
                    match Record::read(&mut c, h) {
                        Ok(Record::Block(b)) => {
                            let n = c.position() as usize;
                            forward.extend(self.pending.drain(..n));
                            *left = b.payload_len.into();
                        }
                        Ok(Record::End(_)) => {
                            let n = c.position() as usize;
                            forward.extend(self.pending.drain(..n));
                            self.frame = Frame::Done;
                        }
                        Err(e) if is_truncated(&e) => return Ok((forward, false)),
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
}
