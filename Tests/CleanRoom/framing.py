"""Link framing (§3): the chunk framer, the reassembler with rules 1–11 of §3.1, and the
TCP stream framing of §3.2.
"""

FIRST = 0x01
LAST = 0x02
RESERVED = 0xFC

MAX_MESSAGE_LENGTH = 262144
MAX_PARTIALS = 4
MAX_RESERVED_BYTES = 524288
PARTIAL_TIMEOUT = 10.0
TCP_MAX_CHUNK_LENGTH = 16384
MIN_CHUNK_LENGTH = 20


class Framer:
    """Splits messages into chunks of at most chunk_length bytes; ids count from 0 per link."""

    def __init__(self, chunk_length):
        if chunk_length < MIN_CHUNK_LENGTH:
            raise ValueError("chunk length %d is below the minimum %d" % (chunk_length, MIN_CHUNK_LENGTH))
        self.chunk_length = chunk_length
        self.next_id = 0

    def frame(self, message):
        mid = self.next_id
        self.next_id = (self.next_id + 1) % 256
        cl = self.chunk_length
        if len(message) + 2 <= cl:
            return [bytes([FIRST | LAST, mid]) + message]
        first = cl - 6
        chunks = [bytes([FIRST, mid]) + len(message).to_bytes(4, "little") + message[:first]]
        pos = first
        while pos < len(message):
            piece = message[pos:pos + cl - 2]
            pos += len(piece)
            # The chunk that carries the last byte is the LAST chunk; no empty one follows.
            chunks.append(bytes([LAST if pos == len(message) else 0, mid]) + piece)
        return chunks


class Refused(Exception):
    """A chunk the reassembler refuses. code is "MALFORMED" or "TOO_LARGE" (the LinkError)."""

    def __init__(self, rule, code, reason):
        super().__init__("rule %d: %s" % (rule, reason))
        self.rule = rule
        self.code = code


class _Partial:
    def __init__(self, total, now):
        self.total = total
        self.data = bytearray()
        self.last_seen = now


class Reassembler:
    """Receiver side of §3.1. feed() returns a complete message, or None while one is partial,
    and raises Refused for a refused chunk. Time is passed in so tests need no clock."""

    def __init__(self, max_chunk_length=TCP_MAX_CHUNK_LENGTH, max_message_length=MAX_MESSAGE_LENGTH):
        self.max_chunk_length = max_chunk_length
        self.max_message_length = max_message_length
        self.partials = {}

    def expire(self, now):
        """Rule 1: drop partials idle for more than 10 s since their last chunk."""
        for mid in [m for m, p in self.partials.items() if now - p.last_seen > PARTIAL_TIMEOUT]:
            del self.partials[mid]

    def feed(self, chunk, now=0.0):
        self.expire(now)
        if len(chunk) > self.max_chunk_length:
            raise Refused(2, "TOO_LARGE", "chunk of %d bytes over %d" % (len(chunk), self.max_chunk_length))
        if len(chunk) < 2:
            raise Refused(3, "MALFORMED", "chunk shorter than 2 bytes")
        flags, mid = chunk[0], chunk[1]
        if flags & RESERVED:
            raise Refused(3, "MALFORMED", "reserved flag bits set: 0x%02x" % flags)
        if flags == FIRST and len(chunk) < 6:
            raise Refused(3, "MALFORMED", "FIRST chunk without room for total_length")
        if flags & FIRST:
            self.partials.pop(mid, None)  # rule 4: the sender restarted this id
        if flags == FIRST | LAST:
            if len(chunk) - 2 > self.max_message_length:
                raise Refused(5, "TOO_LARGE", "message over max_message_length")
            return bytes(chunk[2:])
        if flags == FIRST:
            total = int.from_bytes(chunk[2:6], "little")
            payload = chunk[6:]
            if total > self.max_message_length:
                raise Refused(6, "TOO_LARGE", "total_length %d over max_message_length" % total)
            if total <= len(payload):
                raise Refused(7, "MALFORMED", "total_length %d not above the first payload" % total)
            if len(self.partials) >= MAX_PARTIALS:
                raise Refused(8, "TOO_LARGE", "already %d partial messages" % MAX_PARTIALS)
            reserved = sum(p.total for p in self.partials.values()) + total
            if reserved > MAX_RESERVED_BYTES:
                raise Refused(9, "TOO_LARGE", "%d reserved bytes over %d" % (reserved, MAX_RESERVED_BYTES))
            partial = _Partial(total, now)
            partial.data += payload
            self.partials[mid] = partial
            return None
        partial = self.partials.get(mid)
        if partial is None:
            raise Refused(10, "MALFORMED", "continuation without first (id %d)" % mid)
        received = len(partial.data) + len(chunk) - 2
        if (flags == LAST) != (received == partial.total) or received > partial.total:
            del self.partials[mid]
            raise Refused(11, "MALFORMED", "received %d of total_length %d" % (received, partial.total))
        partial.data += chunk[2:]
        partial.last_seen = now
        if flags == LAST:
            del self.partials[mid]
            return bytes(partial.data)
        return None


def stream_frame(chunk):
    """§3.2: u16 little-endian length, then the chunk."""
    return len(chunk).to_bytes(2, "little") + chunk


class StreamClosed(Exception):
    def __init__(self, code, reason):
        super().__init__(reason)
        self.code = code


class StreamDeframer:
    """§3.2 receiver: validates each prefix before waiting for its chunk. A bad prefix raises
    StreamClosed (the connection ends); an incomplete frame at EOF is simply never returned."""

    def __init__(self, max_chunk_length=TCP_MAX_CHUNK_LENGTH):
        self.max_chunk_length = max_chunk_length
        self.buffer = bytearray()

    def feed(self, data):
        self.buffer += data
        chunks = []
        while len(self.buffer) >= 2:
            length = int.from_bytes(self.buffer[:2], "little")
            if length == 0:
                raise StreamClosed("MALFORMED", "zero-length frame")
            if length > self.max_chunk_length:
                raise StreamClosed("TOO_LARGE", "frame of %d bytes over %d" % (length, self.max_chunk_length))
            if len(self.buffer) < 2 + length:
                break
            chunks.append(bytes(self.buffer[2:2 + length]))
            del self.buffer[:2 + length]
        return chunks
