"""X25519 (RFC 7748 §5): the Montgomery ladder over Curve25519."""

P = 2**255 - 19
A24 = 121665


def _decode_scalar(k):
    b = bytearray(k)
    b[0] &= 248
    b[31] &= 127
    b[31] |= 64
    return int.from_bytes(b, "little")


def _decode_u(u):
    # RFC 7748: mask the top bit, accept non-canonical values by reducing them.
    return int.from_bytes(u, "little") & ((1 << 255) - 1)


def x25519(k, u):
    if len(k) != 32 or len(u) != 32:
        raise ValueError("X25519 inputs must be 32 bytes")
    k = _decode_scalar(k)
    x1 = _decode_u(u) % P
    x2, z2, x3, z3 = 1, 0, x1, 1
    swap = 0
    for t in range(254, -1, -1):
        bit = (k >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a = (x2 + z2) % P
        aa = a * a % P
        b = (x2 - z2) % P
        bb = b * b % P
        e = (aa - bb) % P
        c = (x3 + z3) % P
        d = (x3 - z3) % P
        da = d * a % P
        cb = c * b % P
        x3 = (da + cb) ** 2 % P
        z3 = x1 * (da - cb) ** 2 % P
        x2 = aa * bb % P
        z2 = e * (aa + A24 * e) % P
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, P - 2, P) % P).to_bytes(32, "little")


BASE = (9).to_bytes(32, "little")


def public_key(k):
    return x25519(k, BASE)
