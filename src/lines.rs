//! Splits a connection's bytes into request lines, with a bound on their length.

use bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

/// What the decoder yields.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One line, without its `\n` (or `\r\n`). Not checked for UTF-8: the JSON decoder says so.
    Line(BytesMut),
    /// A line longer than the limit. Nothing after it can be trusted to start a request.
    TooLong,
}

/// A newline splitter that never buffers more than `max` bytes of one line.
#[derive(Debug)]
pub struct LineDecoder {
    max: usize,
    /// How far the current buffer has been searched for `\n` already, so each byte is looked at once.
    searched: usize,
}

impl LineDecoder {
    pub fn new(max: usize) -> LineDecoder {
        LineDecoder { max, searched: 0 }
    }
}

impl Decoder for LineDecoder {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        let limit = buf.len().min(self.max + 1);
        match buf[self.searched..limit].iter().position(|&b| b == b'\n') {
            Some(offset) => {
                let end = self.searched + offset;
                self.searched = 0;
                let mut line = buf.split_to(end);
                buf.advance(1);
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                Ok(Some(Frame::Line(line)))
            }
            None if buf.len() > self.max => {
                buf.clear();
                self.searched = 0;
                Ok(Some(Frame::TooLong))
            }
            None => {
                self.searched = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        match self.decode(buf)? {
            Some(frame) => Ok(Some(frame)),
            // A last line without its newline: take it rather than drop a request.
            None if !buf.is_empty() => {
                self.searched = 0;
                Ok(Some(Frame::Line(buf.split())))
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(decoder: &mut LineDecoder, buf: &mut BytesMut) -> Vec<Frame> {
        std::iter::from_fn(|| decoder.decode(buf).unwrap()).collect()
    }

    #[test]
    fn splits_lines_across_reads() {
        let mut decoder = LineDecoder::new(16);
        let mut buf = BytesMut::from(&b"{\"a\":1}\n{\"b\""[..]);
        assert_eq!(
            frames(&mut decoder, &mut buf),
            vec![Frame::Line(BytesMut::from(&b"{\"a\":1}"[..]))]
        );
        buf.extend_from_slice(b":2}\r\n");
        assert_eq!(
            frames(&mut decoder, &mut buf),
            vec![Frame::Line(BytesMut::from(&b"{\"b\":2}"[..]))]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn a_line_at_the_limit_passes_and_one_past_it_does_not() {
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"abcd\n"[..]);
        assert_eq!(
            frames(&mut decoder, &mut buf),
            vec![Frame::Line(BytesMut::from(&b"abcd"[..]))]
        );
        let mut buf = BytesMut::from(&b"abcde"[..]);
        assert_eq!(frames(&mut decoder, &mut buf), vec![Frame::TooLong]);
    }

    #[test]
    fn takes_a_last_line_without_newline() {
        let mut decoder = LineDecoder::new(16);
        let mut buf = BytesMut::from(&b"{}"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert_eq!(
            decoder.decode_eof(&mut buf).unwrap(),
            Some(Frame::Line(BytesMut::from(&b"{}"[..])))
        );
    }
}
