"""NIST P-256 (SEC 1, FIPS 186) arithmetic: enough for ECDH as a DHKEM recipient.

Affine coordinates with modular inverses: a handful of scalar multiplications in total, so
clarity wins over speed. Not constant time; it only checks published vectors.
"""

P = 2**256 - 2**224 + 2**192 + 2**96 - 1
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def on_curve(pt):
    x, y = pt
    return 0 <= x < P and 0 <= y < P and (y * y - (x * x * x - 3 * x + B)) % P == 0


def _add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return None
        lam = (3 * x1 * x1 - 3) * pow(2 * y1, -1, P) % P
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (lam * lam - x1 - x2) % P
    return x3, (lam * (x1 - x3) - y1) % P


def mul(k, pt):
    result = None
    for bit in bin(k)[2:]:
        result = _add(result, result)
        if bit == "1":
            result = _add(result, pt)
    return result


def scalar_from_bytes(sk):
    """A 32-byte big-endian private scalar; must be in 1…n−1."""
    if len(sk) != 32:
        raise ValueError("P-256 private key must be 32 bytes")
    k = int.from_bytes(sk, "big")
    if not 0 < k < N:
        raise ValueError("P-256 private scalar out of range")
    return k


def public_key(sk):
    """The uncompressed SEC 1 encoding 04 ‖ X ‖ Y."""
    return encode_point(mul(scalar_from_bytes(sk), G))


def encode_point(pt):
    return b"\x04" + pt[0].to_bytes(32, "big") + pt[1].to_bytes(32, "big")


def decode_point(data):
    """Accepts only the 65-byte uncompressed form of a point on the curve."""
    if len(data) != 65 or data[0] != 4:
        raise ValueError("P-256 point must be 65 bytes starting with 04")
    pt = (int.from_bytes(data[1:33], "big"), int.from_bytes(data[33:], "big"))
    if not on_curve(pt):
        raise ValueError("P-256 point is not on the curve")
    return pt


def ecdh(sk, peer):
    """The shared x-coordinate, 32 bytes big-endian (RFC 9180 §7.1.1 DH for P-256)."""
    shared = mul(scalar_from_bytes(sk), decode_point(peer))
    if shared is None:
        raise ValueError("P-256 ECDH gave the point at infinity")
    return shared[0].to_bytes(32, "big")
