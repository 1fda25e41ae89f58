"""ChaCha20-Poly1305 AEAD (RFC 8439), only to open the encryptions of the HPKE X-Wing vector,
whose published AEAD is 0x0003."""

_MASK = 0xFFFFFFFF


def _rotl(v, c):
    return ((v << c) & _MASK) | (v >> (32 - c))


def _quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & _MASK; s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & _MASK; s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & _MASK; s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & _MASK; s[b] = _rotl(s[b] ^ s[c], 7)


def _block(key, counter, nonce):
    state = ([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
             + [int.from_bytes(key[i:i + 4], "little") for i in range(0, 32, 4)]
             + [counter] + [int.from_bytes(nonce[i:i + 4], "little") for i in range(0, 12, 4)])
    s = list(state)
    for _ in range(10):
        _quarter(s, 0, 4, 8, 12); _quarter(s, 1, 5, 9, 13)
        _quarter(s, 2, 6, 10, 14); _quarter(s, 3, 7, 11, 15)
        _quarter(s, 0, 5, 10, 15); _quarter(s, 1, 6, 11, 12)
        _quarter(s, 2, 7, 8, 13); _quarter(s, 3, 4, 9, 14)
    return b"".join(((a + b) & _MASK).to_bytes(4, "little") for a, b in zip(s, state))


def _xor_stream(key, counter, nonce, data):
    out = bytearray()
    for i in range(0, len(data), 64):
        ks = _block(key, counter + i // 64, nonce)
        out += bytes(a ^ b for a, b in zip(data[i:i + 64], ks))
    return bytes(out)


def _poly1305(key, msg):
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:], "little")
    p = (1 << 130) - 5
    acc = 0
    for i in range(0, len(msg), 16):
        block = msg[i:i + 16] + b"\x01"
        acc = (acc + int.from_bytes(block, "little")) * r % p
    return ((acc + s) & ((1 << 128) - 1)).to_bytes(16, "little")


def _pad16(data):
    return b"\0" * (-len(data) % 16)


def open_(key, nonce, ct_and_tag, aad=b""):
    if len(ct_and_tag) < 16:
        return None
    ct, tag = ct_and_tag[:-16], ct_and_tag[-16:]
    otk = _block(key, 0, nonce)[:32]
    mac_data = (aad + _pad16(aad) + ct + _pad16(ct)
                + len(aad).to_bytes(8, "little") + len(ct).to_bytes(8, "little"))
    expected = _poly1305(otk, mac_data)
    if sum(a ^ b for a, b in zip(expected, tag)) != 0:
        return None
    return _xor_stream(key, 1, nonce, ct)
