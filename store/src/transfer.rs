//! Zero-copy transfer of a consume queue's records to a file descriptor (a socket, a pipe),
//! with `sendfile(2)` from the segment files, falling back to `write(2)` from the mapping
//! where `sendfile` is unsupported. Source: Kafka's `FileRecords.writeTo` over
//! `FileChannel.transferTo`; the at-least-one-message rule of the byte limit is Kafka's
//! KIP-74 fetch rule.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use lock_api::RawMutex;

use crate::codec::{self, DecodeOptions, Decoded, RecordCrcCheck};
use crate::commitlog::CommitLog;
use crate::consume_queue::Entry;
use crate::error::ReadError;

/// How [`MessageStore::transfer_to`](crate::MessageStore::transfer_to) moves bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TransferMethod {
    /// `sendfile(2)` from the segment file: the kernel copies page-cache pages to the
    /// descriptor without a pass through user space (Kafka's `FileChannel.transferTo`).
    /// Where the kernel refuses it for this pair of descriptors (`EINVAL`, `ENOSYS`, e.g. an
    /// output opened with `O_APPEND`), the transfer continues with [`TransferMethod::Copy`].
    #[default]
    Sendfile,
    /// `write(2)` straight from the segment's memory mapping (one copy, user to kernel).
    Copy,
}

/// What to send: at most `max_messages` messages and `max_bytes` bytes, whole records only.
///
/// The byte limit never cuts a record. A first record larger than `max_bytes` is sent
/// whole, so a consumer always makes progress (Kafka's KIP-74 rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferLimit {
    /// Largest number of messages (records) to send.
    pub max_messages: u64,
    /// Largest number of bytes to send, except for a single first record (see above).
    pub max_bytes: u64,
    /// How to move the bytes. Default [`TransferMethod::Sendfile`].
    pub method: TransferMethod,
}

impl TransferLimit {
    /// At most `n` messages, no byte limit, `sendfile` where supported.
    pub const fn messages(n: u64) -> Self {
        Self { max_messages: n, max_bytes: u64::MAX, method: TransferMethod::Sendfile }
    }

    /// At most `n` bytes of whole records (at least one record), any number of messages.
    pub const fn bytes(n: u64) -> Self {
        Self { max_messages: u64::MAX, max_bytes: n, method: TransferMethod::Sendfile }
    }

    /// The same limit, moving bytes with `method`.
    pub const fn with_method(self, method: TransferMethod) -> Self {
        Self { method, ..self }
    }
}

/// What a transfer sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TransferReport {
    /// Whole records written to the descriptor, in queue order.
    pub messages: u64,
    /// Bytes written to the descriptor (the records' total size).
    pub bytes: u64,
    /// Queue offset after the last record sent: where the next transfer starts.
    pub next_offset: u64,
    /// Bytes that went through `write(2)` from the mapping instead of `sendfile(2)` (all of
    /// them with [`TransferMethod::Copy`], or after the kernel refused `sendfile`).
    pub copied_bytes: u64,
}

impl TransferReport {
    /// Nothing sent; the next transfer starts at `offset`.
    pub(crate) fn empty_at(offset: u64) -> Self {
        Self { next_offset: offset, ..Self::default() }
    }
}

/// [`MessageStore::transfer_to`](crate::MessageStore::transfer_to) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// A consume-queue entry or record could not be read; nothing of that record was sent.
    #[error("transfer stopped before queue offset {}: {source}", report.next_offset)]
    Read {
        /// What was sent before the failure: whole records only.
        report: TransferReport,
        /// The read error.
        #[source]
        source: ReadError,
    },
    /// Writing to the descriptor failed (a closed peer, a full non-blocking socket). The
    /// descriptor holds `report`'s whole records, then `partial_bytes` bytes of the next
    /// one: a stream consumer must drop the connection or skip those bytes.
    #[error(
        "writing to the descriptor failed after {} whole records ({} bytes) and {partial_bytes} bytes of the next: {source}",
        report.messages,
        report.bytes
    )]
    Write {
        /// Whole records sent before the failure.
        report: TransferReport,
        /// Bytes of the next record that reached the descriptor.
        partial_bytes: u64,
        /// The failed `sendfile`/`write`.
        #[source]
        source: io::Error,
    },
}

/// A run of records contiguous in one segment, sent with one `sendfile` loop.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: u64,
    end: u64,
    /// Records in the run.
    messages: u64,
}

/// Sends the records of a consume queue from `from_offset` on.
///
/// `entry(qo)` returns the dispatched consume-queue entry at `qo`; records are only sent
/// below the log's readable end.
pub(crate) fn transfer<R: RawMutex>(
    log: &CommitLog<R>,
    (topic, queue_id): (&str, u32),
    from_offset: u64,
    limit: TransferLimit,
    mut entry: impl FnMut(u64) -> Result<Option<Entry>, ReadError>,
    out: BorrowedFd<'_>,
) -> Result<TransferReport, TransferError> {
    let mut report = TransferReport { next_offset: from_offset, ..TransferReport::default() };
    let mut method = limit.method;
    let mut run: Option<Run> = None;
    let mut planned_bytes = 0u64;
    let readable_end = log.readable_end();
    let mut qo = from_offset;
    let read_failure = loop {
        if report.messages + run.map_or(0, |r| r.messages) >= limit.max_messages {
            break None;
        }
        let e = match entry(qo) {
            Ok(Some(e)) if e.size > 0 => e,
            Ok(_) => break None,
            Err(source) => break Some(source),
        };
        let size = u64::from(e.size);
        let Some(end) = e.physical_offset.checked_add(size) else {
            break Some(bad_entry(topic, queue_id, qo, e));
        };
        if end > readable_end {
            break None;
        }
        let first = report.messages == 0 && run.is_none();
        if !first && planned_bytes.saturating_add(size) > limit.max_bytes {
            break None;
        }
        if let Err(source) = check_record(log, (topic, queue_id), qo, e) {
            break Some(source);
        }
        let same_segment = |r: &Run| r.start / log.segment_size() == e.physical_offset / log.segment_size();
        match run.as_mut() {
            Some(r) if r.end == e.physical_offset && same_segment(r) => {
                r.end = end;
                r.messages += 1;
            }
            _ => {
                if let Some(r) = run.take() {
                    send_run(log, r, out, &mut method, &mut report)?;
                }
                run = Some(Run { start: e.physical_offset, end, messages: 1 });
            }
        }
        planned_bytes += size;
        qo += 1;
    };
    if let Some(r) = run {
        send_run(log, r, out, &mut method, &mut report)?;
    }
    match read_failure {
        Some(source) => Err(TransferError::Read { report, source }),
        None => Ok(report),
    }
}

fn bad_entry(topic: &str, queue_id: u32, queue_offset: u64, e: Entry) -> ReadError {
    ReadError::BadQueueEntry {
        topic: topic.to_owned(),
        queue_id,
        queue_offset,
        physical_offset: e.physical_offset,
        size: e.size,
    }
}

/// Checks that the entry points at the whole record of (topic, queue id, qo), structure
/// only: the record was verified by recovery or written by this process, and a damaged
/// entry could point at another queue's record.
fn check_record<R: RawMutex>(
    log: &CommitLog<R>,
    (topic, queue_id): (&str, u32),
    qo: u64,
    e: Entry,
) -> Result<(), ReadError> {
    let end = e.physical_offset + u64::from(e.size);
    let bytes = log.bytes_from(e.physical_offset, end).ok_or_else(|| bad_entry(topic, queue_id, qo, e))?;
    if bytes.len() != e.size as usize {
        return Err(bad_entry(topic, queue_id, qo, e));
    }
    let opts = DecodeOptions {
        expected_physical_offset: Some(e.physical_offset),
        verify_body_crc: false,
        record_crc: RecordCrcCheck::Skip,
    };
    match codec::decode_with(bytes, &opts) {
        Ok(Decoded::Message(m))
            if m.queue_offset() == qo
                && m.queue_id() == queue_id
                && m.topic() == topic
                && m.total_size() == e.size =>
        {
            Ok(())
        }
        Ok(_) => Err(bad_entry(topic, queue_id, qo, e)),
        Err(source) => Err(ReadError::Corrupt { physical_offset: e.physical_offset, source }),
    }
}

/// Writes the run's bytes to `out`, switching `method` to copy if the kernel refuses
/// `sendfile` before any byte of the run went out through it.
fn send_run<R: RawMutex>(
    log: &CommitLog<R>,
    run: Run,
    out: BorrowedFd<'_>,
    method: &mut TransferMethod,
    report: &mut TransferReport,
) -> Result<(), TransferError> {
    let write_failed = |report: &TransferReport, partial_bytes: u64, source: io::Error| {
        TransferError::Write { report: *report, partial_bytes, source }
    };
    let mut at = run.start;
    let mut copied = 0;
    while at < run.end {
        let result = match *method {
            TransferMethod::Sendfile => sendfile_once(log, at, run.end, out),
            TransferMethod::Copy => copy_once(log, at, run.end, out).inspect(|&n| copied += n as u64),
        };
        match result {
            Ok(0) => {
                let eof = io::Error::new(io::ErrorKind::WriteZero, "the descriptor accepted no bytes");
                return Err(write_failed(report, at - run.start, eof));
            }
            Ok(n) => at += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if *method == TransferMethod::Sendfile
                    && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) =>
            {
                // sendfile writes nothing when it fails, so the copy resumes at `at`.
                *method = TransferMethod::Copy;
            }
            Err(e) => return Err(write_failed(report, at - run.start, e)),
        }
    }
    report.messages += run.messages;
    report.bytes += run.end - run.start;
    report.next_offset += run.messages;
    report.copied_bytes += copied;
    Ok(())
}

/// One `sendfile` call for `[at, end)`, which lies in one segment below the readable end.
fn sendfile_once<R: RawMutex>(
    log: &CommitLog<R>,
    at: u64,
    end: u64,
    out: BorrowedFd<'_>,
) -> io::Result<usize> {
    let seg = log.segment_at(at).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let mut off =
        libc::off_t::try_from(at - seg.start()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let count =
        usize::try_from(end.min(seg.end()) - at).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: both descriptors are open for the duration of the call (`out` is borrowed,
    // the segment's file lives as long as `log`); `off` is a valid, writable off_t.
    let n = unsafe { libc::sendfile(out.as_raw_fd(), seg.file().as_raw_fd(), &mut off, count) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// One `write` of `[at, end)` from the mapping.
fn copy_once<R: RawMutex>(log: &CommitLog<R>, at: u64, end: u64, out: BorrowedFd<'_>) -> io::Result<usize> {
    let bytes = log.bytes_from(at, end).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    // SAFETY: `out` is an open descriptor for the duration of the call; `bytes` is a valid
    // slice of the mapping below the readable end, which no writer touches.
    let n = unsafe { libc::write(out.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}
