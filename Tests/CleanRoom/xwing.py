"""X-Wing KEM (draft-connolly-cfrg-xwing-kem-06): ML-KEM-768 + X25519 with a SHA3-256 combiner."""
import hashlib

import mlkem
import x25519

# "\.//^\" in ASCII, appended last in the -06 combiner.
LABEL = bytes([0x5C, 0x2E, 0x2F, 0x2F, 0x5E, 0x5C])
PK_LEN = mlkem.EK_LEN + 32   # 1216
CT_LEN = mlkem.CT_LEN + 32   # 1120


def expand_key(seed):
    """seed(32) → (ML-KEM dk, ML-KEM ek, X25519 sk, X25519 pk), as §5.1 describes."""
    if len(seed) != 32:
        raise ValueError("X-Wing seed must be 32 bytes")
    expanded = hashlib.shake_256(seed).digest(96)
    ek_m, dk_m = mlkem.keygen(expanded[:32], expanded[32:64])
    sk_x = expanded[64:96]
    return dk_m, ek_m, sk_x, x25519.public_key(sk_x)


def public_key(seed):
    _, ek_m, _, pk_x = expand_key(seed)
    return ek_m + pk_x


def _combine(ss_m, ss_x, ct_x, pk_x):
    return hashlib.sha3_256(ss_m + ss_x + ct_x + pk_x + LABEL).digest()


def encaps_derand(pk, eseed):
    """Deterministic encapsulation from a 64-byte eseed: returns (shared_secret, ct)."""
    if len(pk) != PK_LEN or len(eseed) != 64:
        raise ValueError("X-Wing encapsulation: wrong public key or eseed length")
    pk_m, pk_x = pk[:mlkem.EK_LEN], pk[mlkem.EK_LEN:]
    ek_x = eseed[32:64]
    ct_x = x25519.public_key(ek_x)
    ss_x = x25519.x25519(ek_x, pk_x)
    ss_m, ct_m = mlkem.encaps(pk_m, eseed[:32])
    return _combine(ss_m, ss_x, ct_x, pk_x), ct_m + ct_x


def decaps(seed, ct):
    if len(ct) != CT_LEN:
        raise ValueError("X-Wing ciphertext must be %d bytes, got %d" % (CT_LEN, len(ct)))
    dk_m, _, sk_x, pk_x = expand_key(seed)
    ct_m, ct_x = ct[:mlkem.CT_LEN], ct[mlkem.CT_LEN:]
    ss_m = mlkem.decaps(dk_m, ct_m)
    ss_x = x25519.x25519(sk_x, ct_x)
    return _combine(ss_m, ss_x, ct_x, pk_x)
