"""HPKE (RFC 9180) base mode, recipient side: KEM decapsulation for DHKEM(P-256, HKDF-SHA256)
and X-Wing, the key schedule, the secret exporter, and AEAD open for the AES-GCM suites.
"""
import hashlib
import hmac

import aes_gcm
import chacha20poly1305
import p256
import xwing

KEM_P256 = 0x0010
KEM_XWING = 0x647A
KDF_HKDF_SHA256 = 0x0001
AEAD_AES128GCM = 0x0001
AEAD_AES256GCM = 0x0002
AEAD_CHACHA20POLY1305 = 0x0003
_AEAD_KEY_LEN = {AEAD_AES128GCM: 16, AEAD_AES256GCM: 32, AEAD_CHACHA20POLY1305: 32}


def hkdf_extract(salt, ikm):
    return hmac.new(salt or bytes(32), ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    out = b""
    block = b""
    counter = 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def labeled_extract(suite_id, salt, label, ikm):
    return hkdf_extract(salt, b"HPKE-v1" + suite_id + label + ikm)


def labeled_expand(suite_id, prk, label, info, length):
    return hkdf_expand(prk, length.to_bytes(2, "big") + b"HPKE-v1" + suite_id + label + info,
                       length)


def suite_id(kem_id, kdf_id, aead_id):
    return b"HPKE" + kem_id.to_bytes(2, "big") + kdf_id.to_bytes(2, "big") + aead_id.to_bytes(2, "big")


def p256_decap(sk, enc, pk_r=None):
    """DHKEM(P-256, HKDF-SHA256) Decap (RFC 9180 §4.1). pk_r, if given, is the 65-byte
    recipient key; otherwise it is derived from sk."""
    kem_suite = b"KEM" + KEM_P256.to_bytes(2, "big")
    dh = p256.ecdh(sk, enc)
    if pk_r is None:
        pk_r = p256.public_key(sk)
    kem_context = enc + pk_r
    eae_prk = labeled_extract(kem_suite, b"", b"eae_prk", dh)
    return labeled_expand(kem_suite, eae_prk, b"shared_secret", kem_context, 32)


def decap(kem_id, sk, enc):
    if kem_id == KEM_P256:
        return p256_decap(sk, enc)
    if kem_id == KEM_XWING:
        # X-Wing's shared secret goes into the key schedule unchanged (§5.1).
        return xwing.decaps(sk, enc)
    raise ValueError("unsupported KEM 0x%04x" % kem_id)


class Context:
    """A base-mode recipient context: key, base_nonce, exporter_secret and a sequence number."""

    def __init__(self, kem_id, aead_id, shared_secret, info, kdf_id=KDF_HKDF_SHA256):
        if kdf_id != KDF_HKDF_SHA256:
            raise ValueError("only HKDF-SHA256 is implemented")
        self.suite = suite_id(kem_id, kdf_id, aead_id)
        self.aead_id = aead_id
        psk_id_hash = labeled_extract(self.suite, b"", b"psk_id_hash", b"")
        info_hash = labeled_extract(self.suite, b"", b"info_hash", info)
        ksc = b"\x00" + psk_id_hash + info_hash
        secret = labeled_extract(self.suite, shared_secret, b"secret", b"")
        nk = _AEAD_KEY_LEN[aead_id]
        self.key = labeled_expand(self.suite, secret, b"key", ksc, nk)
        self.base_nonce = labeled_expand(self.suite, secret, b"base_nonce", ksc, 12)
        self.exporter_secret = labeled_expand(self.suite, secret, b"exp", ksc, 32)
        self.seq = 0

    def export(self, context, length=32):
        return labeled_expand(self.suite, self.exporter_secret, b"sec", context, length)

    def next_nonce(self):
        return bytes(a ^ b for a, b in zip(self.base_nonce, self.seq.to_bytes(12, "big")))

    def open(self, aad, ct):
        """Opens the next message in sequence; None (and no sequence step) if it fails."""
        if self.aead_id == AEAD_CHACHA20POLY1305:
            pt = chacha20poly1305.open_(self.key, self.next_nonce(), ct, aad)
        else:
            pt = aes_gcm.open_(self.key, self.next_nonce(), ct, aad)
        if pt is not None:
            self.seq += 1
        return pt


def setup_base_r(kem_id, aead_id, enc, sk, info):
    return Context(kem_id, aead_id, decap(kem_id, sk, enc), info)
