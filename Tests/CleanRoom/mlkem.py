"""ML-KEM-768 (FIPS 203): key generation from (d, z), encapsulation from m, decapsulation
with implicit rejection. Written from the standard's algorithms 13–18 and their helpers.
"""
import hashlib

Q = 3329
N = 256
K = 3
ETA1 = 2
ETA2 = 2
DU = 10
DV = 4


def _bitrev7(i):
    return int("{:07b}".format(i)[::-1], 2)


# ζ = 17 is the primitive 256th root of unity mod q (FIPS 203 §4.3).
ZETAS = [pow(17, _bitrev7(i), Q) for i in range(128)]
GAMMAS = [pow(17, 2 * _bitrev7(i) + 1, Q) for i in range(128)]
_N_INV = pow(128, -1, Q)


def ntt(f):
    f = list(f)
    i = 1
    length = 128
    while length >= 2:
        for start in range(0, N, 2 * length):
            z = ZETAS[i]
            i += 1
            for j in range(start, start + length):
                t = z * f[j + length] % Q
                f[j + length] = (f[j] - t) % Q
                f[j] = (f[j] + t) % Q
        length //= 2
    return f


def ntt_inv(f):
    f = list(f)
    i = 127
    length = 2
    while length <= 128:
        for start in range(0, N, 2 * length):
            z = ZETAS[i]
            i -= 1
            for j in range(start, start + length):
                t = f[j]
                f[j] = (t + f[j + length]) % Q
                f[j + length] = z * (f[j + length] - t) % Q
        length *= 2
    return [x * _N_INV % Q for x in f]


def ntt_mul(f, g):
    h = [0] * N
    for i in range(128):
        a0, a1, b0, b1 = f[2 * i], f[2 * i + 1], g[2 * i], g[2 * i + 1]
        h[2 * i] = (a0 * b0 + a1 * b1 % Q * GAMMAS[i]) % Q
        h[2 * i + 1] = (a0 * b1 + a1 * b0) % Q
    return h


def _add(f, g):
    return [(a + b) % Q for a, b in zip(f, g)]


def _sub(f, g):
    return [(a - b) % Q for a, b in zip(f, g)]


def byte_encode(f, d):
    bits = 0
    acc = 0
    for i, x in enumerate(f):
        acc |= x << (d * i)
        bits += d
    return acc.to_bytes(bits // 8, "little")


def byte_decode(data, d):
    acc = int.from_bytes(data, "little")
    mask = (1 << d) - 1
    out = [(acc >> (d * i)) & mask for i in range(N)]
    if d == 12:
        out = [x % Q for x in out]
    return out


def compress(f, d):
    return [((x << d) + Q // 2) // Q % (1 << d) for x in f]


def decompress(f, d):
    return [(y * Q + (1 << (d - 1))) >> d for y in f]


def sample_ntt(seed):
    # Algorithm 7: rejection sampling from a SHAKE128 stream. 840 bytes almost always
    # suffice; extend the stream when they do not.
    length = 840
    while True:
        stream = hashlib.shake_128(seed).digest(length)
        out = []
        for i in range(0, length - 2, 3):
            d1 = stream[i] | ((stream[i + 1] & 15) << 8)
            d2 = (stream[i + 1] >> 4) | (stream[i + 2] << 4)
            for d in (d1, d2):
                if d < Q and len(out) < N:
                    out.append(d)
            if len(out) == N:
                return out
        length *= 2


def sample_cbd(data, eta):
    bits = int.from_bytes(data, "little")
    out = []
    for i in range(N):
        x = sum((bits >> (2 * i * eta + j)) & 1 for j in range(eta))
        y = sum((bits >> (2 * i * eta + eta + j)) & 1 for j in range(eta))
        out.append((x - y) % Q)
    return out


def _prf(eta, s, b):
    return hashlib.shake_256(s + bytes([b])).digest(64 * eta)


def _matrix(rho):
    # Â[i][j] is sampled from ρ ‖ j ‖ i (FIPS 203 Algorithm 13 line 6).
    return [[sample_ntt(rho + bytes([j, i])) for j in range(K)] for i in range(K)]


def _h(data):
    return hashlib.sha3_256(data).digest()


def _g(data):
    digest = hashlib.sha3_512(data).digest()
    return digest[:32], digest[32:]


def _pke_keygen(d):
    rho, sigma = _g(d + bytes([K]))
    a = _matrix(rho)
    s = [ntt(sample_cbd(_prf(ETA1, sigma, i), ETA1)) for i in range(K)]
    e = [ntt(sample_cbd(_prf(ETA1, sigma, K + i), ETA1)) for i in range(K)]
    t = []
    for i in range(K):
        acc = e[i]
        for j in range(K):
            acc = _add(acc, ntt_mul(a[i][j], s[j]))
        t.append(acc)
    ek = b"".join(byte_encode(x, 12) for x in t) + rho
    dk = b"".join(byte_encode(x, 12) for x in s)
    return ek, dk


def _pke_encrypt(ek, m, r):
    t = [byte_decode(ek[384 * i:384 * (i + 1)], 12) for i in range(K)]
    a = _matrix(ek[384 * K:])
    y = [ntt(sample_cbd(_prf(ETA1, r, i), ETA1)) for i in range(K)]
    e1 = [sample_cbd(_prf(ETA2, r, K + i), ETA2) for i in range(K)]
    e2 = sample_cbd(_prf(ETA2, r, 2 * K), ETA2)
    u = []
    for i in range(K):
        acc = [0] * N
        for j in range(K):
            acc = _add(acc, ntt_mul(a[j][i], y[j]))  # Âᵀ
        u.append(_add(ntt_inv(acc), e1[i]))
    acc = [0] * N
    for i in range(K):
        acc = _add(acc, ntt_mul(t[i], y[i]))
    mu = decompress(byte_decode(m, 1), 1)
    v = _add(_add(ntt_inv(acc), e2), mu)
    c1 = b"".join(byte_encode(compress(x, DU), DU) for x in u)
    return c1 + byte_encode(compress(v, DV), DV)


def _pke_decrypt(dk, c):
    u = [decompress(byte_decode(c[32 * DU * i:32 * DU * (i + 1)], DU), DU) for i in range(K)]
    v = decompress(byte_decode(c[32 * DU * K:], DV), DV)
    s = [byte_decode(dk[384 * i:384 * (i + 1)], 12) for i in range(K)]
    acc = [0] * N
    for i in range(K):
        acc = _add(acc, ntt_mul(s[i], ntt(u[i])))
    w = _sub(v, ntt_inv(acc))
    return byte_encode(compress(w, 1), 1)


EK_LEN = 384 * K + 32      # 1184
DK_LEN = 768 * K + 96      # 2400
CT_LEN = 32 * (DU * K + DV)  # 1088


def keygen(d, z):
    """Algorithm 16 (ML-KEM.KeyGen_internal): returns (ek, dk)."""
    ek, dk_pke = _pke_keygen(d)
    return ek, dk_pke + ek + _h(ek) + z


def encaps(ek, m):
    """Algorithm 17 (ML-KEM.Encaps_internal): returns (shared_key, ciphertext)."""
    if len(ek) != EK_LEN:
        raise ValueError("ML-KEM-768 encapsulation key must be %d bytes" % EK_LEN)
    key, r = _g(m + _h(ek))
    return key, _pke_encrypt(ek, m, r)


def decaps(dk, c):
    """Algorithm 18 (ML-KEM.Decaps_internal), with implicit rejection."""
    if len(dk) != DK_LEN or len(c) != CT_LEN:
        raise ValueError("ML-KEM-768 decapsulation: wrong key or ciphertext length")
    dk_pke = dk[:384 * K]
    ek = dk[384 * K:768 * K + 32]
    h = dk[768 * K + 32:768 * K + 64]
    z = dk[768 * K + 64:]
    m2 = _pke_decrypt(dk_pke, c)
    key2, r2 = _g(m2 + h)
    rejected = hashlib.shake_256(z + c).digest(32)
    if _pke_encrypt(ek, m2, r2) != c:
        return rejected
    return key2
