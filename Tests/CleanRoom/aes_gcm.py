"""AES-128/256 (FIPS 197) and GCM (NIST SP 800-38D), encryption direction only.

GCM never needs the AES inverse cipher, so only the forward rounds are here. Speed is not a
goal: the vectors hold a few kilobytes of ciphertext.
"""


def _xtime(b):
    b <<= 1
    return (b ^ 0x11B) if b & 0x100 else b


def _gmul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        a = _xtime(a)
        b >>= 1
    return r


def _build_sbox():
    # Computed, not tabulated: multiplicative inverse in GF(2^8), then the affine map.
    inv = [0] * 256
    for x in range(1, 256):
        r, base, e = 1, x, 254  # x^254 = x^-1 in GF(2^8)
        while e:
            if e & 1:
                r = _gmul(r, base)
            base = _gmul(base, base)
            e >>= 1
        inv[x] = r
    sbox = []
    for x in range(256):
        b = inv[x]
        s = b
        for shift in range(1, 5):
            s ^= ((b << shift) | (b >> (8 - shift))) & 0xFF
        sbox.append(s ^ 0x63)
    return sbox


SBOX = _build_sbox()
_MUL2 = [_gmul(x, 2) for x in range(256)]
_MUL3 = [_gmul(x, 3) for x in range(256)]


def expand_key(key):
    if len(key) not in (16, 32):
        raise ValueError("AES key must be 16 or 32 bytes, got %d" % len(key))
    nk = len(key) // 4
    rounds = nk + 6
    words = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (rounds + 1)):
        t = list(words[i - 1])
        if i % nk == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        elif nk > 6 and i % nk == 4:
            t = [SBOX[b] for b in t]
        words.append([a ^ b for a, b in zip(words[i - nk], t)])
    return [sum(words[4 * r:4 * r + 4], []) for r in range(rounds + 1)]


def encrypt_block(round_keys, block):
    s = [b ^ k for b, k in zip(block, round_keys[0])]
    last = len(round_keys) - 1
    for r in range(1, last + 1):
        s = [SBOX[b] for b in s]
        # ShiftRows on the column-major state: row i moves left by i.
        s = [s[4 * ((c + i) % 4) + i] for c in range(4) for i in range(4)]
        if r != last:
            t = []
            for c in range(4):
                a0, a1, a2, a3 = s[4 * c:4 * c + 4]
                t += [_MUL2[a0] ^ _MUL3[a1] ^ a2 ^ a3,
                      a0 ^ _MUL2[a1] ^ _MUL3[a2] ^ a3,
                      a0 ^ a1 ^ _MUL2[a2] ^ _MUL3[a3],
                      _MUL3[a0] ^ a1 ^ a2 ^ _MUL2[a3]]
            s = t
        s = [b ^ k for b, k in zip(s, round_keys[r])]
    return bytes(s)


_R = 0xE1 << 120


def _ghash_mul(x, y):
    # Bit-reflected GF(2^128) multiply of SP 800-38D §6.3.
    z = 0
    for i in range(127, -1, -1):
        if (y >> i) & 1:
            z ^= x
        x = (x >> 1) ^ _R if x & 1 else x >> 1
    return z


def _ghash(h, aad, ct):
    y = 0
    for data in (aad, ct):
        for i in range(0, len(data), 16):
            block = data[i:i + 16].ljust(16, b"\0")
            y = _ghash_mul(y ^ int.from_bytes(block, "big"), h)
    lengths = (8 * len(aad)).to_bytes(8, "big") + (8 * len(ct)).to_bytes(8, "big")
    return _ghash_mul(y ^ int.from_bytes(lengths, "big"), h)


def _ctr(round_keys, j0, data):
    out = bytearray()
    counter = int.from_bytes(j0[12:], "big")
    for i in range(0, len(data), 16):
        counter = (counter + 1) & 0xFFFFFFFF
        stream = encrypt_block(round_keys, j0[:12] + counter.to_bytes(4, "big"))
        out += bytes(a ^ b for a, b in zip(data[i:i + 16], stream))
    return bytes(out)


def _tag(round_keys, j0, aad, ct):
    h = int.from_bytes(encrypt_block(round_keys, bytes(16)), "big")
    s = _ghash(h, aad, ct)
    return (s ^ int.from_bytes(encrypt_block(round_keys, j0), "big")).to_bytes(16, "big")


def seal(key, nonce, plaintext, aad=b""):
    """Returns ciphertext ‖ tag(16). Only 96-bit nonces, the only size the protocol uses."""
    if len(nonce) != 12:
        raise ValueError("GCM nonce must be 12 bytes")
    rk = expand_key(key)
    j0 = nonce + b"\0\0\0\1"
    ct = _ctr(rk, j0, plaintext)
    return ct + _tag(rk, j0, aad, ct)


def open_(key, nonce, ct_and_tag, aad=b""):
    """Returns the plaintext, or None when authentication fails."""
    if len(nonce) != 12 or len(ct_and_tag) < 16:
        return None
    rk = expand_key(key)
    j0 = nonce + b"\0\0\0\1"
    ct, tag = ct_and_tag[:-16], ct_and_tag[-16:]
    expected = _tag(rk, j0, aad, ct)
    diff = 0
    for a, b in zip(expected, tag):
        diff |= a ^ b
    if diff:
        return None
    return _ctr(rk, j0, ct)


def seal_framed(key, nonce, plaintext):
    """The protocol's sealed form (§5.4, §10.2): nonce(12) ‖ ciphertext ‖ tag(16), no AAD."""
    return nonce + seal(key, nonce, plaintext)


def open_framed(key, blob):
    """Opens nonce ‖ ciphertext ‖ tag; None if shorter than 28 bytes or not authentic."""
    if len(blob) < 28:
        return None
    return open_(key, blob[:12], blob[12:])
