"""Rules the vector files do not exercise, checked on self-made inputs: the reassembler's
refusals (§3.1), the TCP prefix (§3.2), and the ratchet receiver's refusals (§10.4), the last
built on the vector's own chain key so that they run against the real key schedule."""
import aes_gcm
import framing
import ratchet
from accessory import internet_key_id


def _refusal(r, chunk, now=0.0):
    try:
        r.feed(chunk, now)
    except framing.Refused as exc:
        return exc.rule, exc.code
    return None


def first(mid, total, payload):
    """A FIRST-only chunk declaring total bytes."""
    return bytes([framing.FIRST, mid]) + total.to_bytes(4, "little") + payload


def check_reassembler(c):
    r = framing.Reassembler(max_chunk_length=182)
    c.check("rule 2 chunk over max_chunk_length", (2, "TOO_LARGE"), _refusal(r, b"\x03\x00" + bytes(181)))
    c.check("rule 3 one-byte chunk", (3, "MALFORMED"), _refusal(r, b"\x03"))
    c.check("rule 3 reserved bit", (3, "MALFORMED"), _refusal(r, b"\x07\x00ab"))
    c.check("rule 3 FIRST-only under 6 bytes", (3, "MALFORMED"), _refusal(r, b"\x01\x00\x10\x00\x00"))
    c.check("empty FIRST|LAST is an empty message", b"", r.feed(b"\x03\x05"))
    c.check("rule 6 total over max_message_length", (6, "TOO_LARGE"),
            _refusal(r, first(1, framing.MAX_MESSAGE_LENGTH + 1, b"x")))
    c.check("rule 7 total not above first payload", (7, "MALFORMED"), _refusal(r, first(1, 3, b"abc")))
    c.check("rule 10 continuation without first", (10, "MALFORMED"), _refusal(r, b"\x00\x09ab"))
    r.feed(first(1, 10, b"abcd"))
    c.check("rule 11 LAST short of total drops the partial", (11, "MALFORMED"), _refusal(r, b"\x02\x01ef"))
    c.check("rule 11 dropped partial is gone", (10, "MALFORMED"), _refusal(r, b"\x02\x01efghij"))
    r.feed(first(1, 10, b"abcd"))
    c.check("rule 11 continuation reaching total", (11, "MALFORMED"), _refusal(r, b"\x00\x01efghij"))
    r.feed(first(1, 10, b"abcd"))
    r.feed(first(1, 10, b"ABCD"))  # rule 4: restart of id 1
    c.check("rule 4 a FIRST restarts the id", b"ABCDefghij", r.feed(b"\x02\x01efghij"))
    for mid in range(4):
        r.feed(first(mid, 100, b"a"))
    c.check("rule 8 a fifth partial", (8, "TOO_LARGE"), _refusal(r, first(9, 100, b"a")))
    r = framing.Reassembler()
    r.feed(first(0, framing.MAX_MESSAGE_LENGTH, b"a"))
    r.feed(first(1, framing.MAX_MESSAGE_LENGTH, b"a"))
    c.check("rule 9 reserved bytes over 524288", (9, "TOO_LARGE"), _refusal(r, first(2, 2, b"a")))
    r = framing.Reassembler()
    r.feed(first(0, 10, b"abcd"), now=0.0)
    r.feed(b"\x00\x00ef", now=9.0)
    c.check("rule 1 idle counted from the last chunk", b"abcdefghij", r.feed(b"\x02\x00ghij", now=18.5))
    r.feed(first(0, 10, b"abcd"), now=0.0)
    c.check("rule 1 idle over 10 s is dropped", (10, "MALFORMED"), _refusal(r, b"\x02\x00efghij", now=10.5))
    # Framer: every chunk full, the remainder 1…chunk_length − 2 bytes, ids wrap 255 → 0.
    f = framing.Framer(20)
    f.next_id = 255
    c.check("framer id wraps 255 → 0", [255, 0], [f.frame(b"a")[0][1], f.frame(b"b")[0][1]])
    c.check("framer sizes for 32 bytes at 20", [20, 20], [len(x) for x in framing.Framer(20).frame(bytes(32))])


def check_stream(c):
    d = framing.StreamDeframer()
    c.check("two frames split across reads", [b"\x03\x00a", b"\x03\x01"],
            d.feed(b"\x03\x00\x03\x00") + d.feed(b"a\x02\x00\x03\x01\x05"))
    c.check("incomplete frame waits", b"\x05", bytes(d.buffer))
    for data, code in ((b"\x00\x00", "MALFORMED"), ((16385).to_bytes(2, "little"), "TOO_LARGE")):
        try:
            framing.StreamDeframer().feed(data)
            got = None
        except framing.StreamClosed as exc:
            got = exc.code
        c.check("prefix %s closes with %s" % (data.hex(), code), code, got)


def check_receiver(c, r):
    key_id = internet_key_id(bytes.fromhex(r["accessoryPublicKey"]))
    chain = next(ch for ch in r["chains"] if ch["direction"] == "HostToAccessory")
    ck0 = bytes.fromhex(chain["chainKey"])
    nonce = bytes(12)
    far = 1 + ratchet.MAX_SKIPPED
    wanted = {0, 1, 3, 7, far, far + 3}
    keys, ck = {}, ck0
    for i in range(far + 4):  # one walk for every key the cases below seal with
        mk, ck = ratchet.step(ck, i)
        if i in wanted:
            keys[i] = mk

    def sealed_at(index, plaintext=b"x"):
        return ratchet.build_message(key_id, index, aes_gcm.seal_framed(keys[index], nonce, plaintext))

    rx = ratchet.Receiver(key_id, ck0)
    c.check("35 bytes is malformed", "malformed", rx.receive(sealed_at(0)[:35])[0])
    c.check("36-byte message with empty plaintext opens", ("opened", b""), rx.receive(sealed_at(0, b"")))
    c.check("other key ID", "unknownKeyID", rx.receive(bytes(4) + sealed_at(1)[4:])[0])
    forged = bytearray(sealed_at(3))
    forged[-1] ^= 1
    c.check("forgery fails", "decryptFailed", rx.receive(bytes(forged))[0])
    c.check("forgery moved nothing", (1, 0), (rx.n, len(rx.skipped)))
    c.check("index 0xffffffff", "tooFarAhead", rx.receive(ratchet.build_message(key_id, ratchet.LAST_INDEX, bytes(40)))[0])
    c.check("n + 50,001 is too far", "tooFarAhead", rx.receive(ratchet.build_message(key_id, far + 1, bytes(40)))[0])
    c.check("n + 50,000 opens", ("opened", b"far"), rx.receive(sealed_at(far, b"far")))
    c.check("50,000 skipped keys kept", ratchet.MAX_SKIPPED, len(rx.skipped))
    c.check("a skipped one opens once", ("opened", b"x"), rx.receive(sealed_at(7)))
    c.check("then it is replayed", "replayed", rx.receive(sealed_at(7))[0])
    c.check("replay of the newest", "replayed", rx.receive(sealed_at(far))[0])
    rx.receive(sealed_at(far + 3))  # two more skipped keys: over 50,000, the lowest goes
    c.check("lowest index dropped first", (False, True), (1 in rx.skipped, far + 1 in rx.skipped))
