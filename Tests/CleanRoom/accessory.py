"""Accessory-side key handling shared by the golden and ratchet checks: restoring a key from
its secret (§5.1), key IDs (§4.2, §10.1), and building the HPKE recipient (§5.2, §5.3)."""
import functools
import hashlib

import hpke
import p256
import xwing

SUITES = {"xwing": hpke.KEM_XWING, "p256": hpke.KEM_P256}
PUBLIC_KEY_LEN = {hpke.KEM_XWING: 1216, hpke.KEM_P256: 64}
ENC_LEN = {hpke.KEM_XWING: 1120, hpke.KEM_P256: 65}


def kem_for_suite(name):
    """Suite names match case-insensitively (§4.1)."""
    try:
        return SUITES[name.lower()]
    except KeyError:
        raise ValueError("unknown cipher suite %r" % name) from None


@functools.lru_cache(maxsize=None)
def public_key(kem, secret):
    """The KeyOffer.public_key bytes: X-Wing pk_M ‖ pk_X, or P-256 raw X ‖ Y without 04."""
    if kem == hpke.KEM_XWING:
        return xwing.public_key(secret)
    return p256.public_key(secret)[1:]


def key_id(public):
    return hashlib.sha256(public).digest()[:8]


def internet_key_id(public):
    return hashlib.sha384(public).digest()[:4]


def exchange_id(enc):
    """The u64 of §4.2: the first 8 digest bytes read big-endian."""
    return int.from_bytes(hashlib.sha256(enc).digest()[:8], "big")


def hpke_info(suite, version, identifier):
    return ("%s-%s-%s" % (suite, version, identifier)).encode("utf-8")


@functools.lru_cache(maxsize=None)
def _shared_secret(kem, secret, enc):
    if len(enc) != ENC_LEN[kem]:
        raise ValueError("encapsulated key is %d bytes, the suite wants %d" % (len(enc), ENC_LEN[kem]))
    if kem == hpke.KEM_XWING:
        return xwing.decaps(secret, enc)
    # §5.1: the recipient key in kem_context is the raw X ‖ Y re-prefixed with 04.
    return hpke.p256_decap(secret, enc, b"\x04" + public_key(kem, secret))


def recipient(kem, secret, enc, info):
    """The one recipient context of an exchange; suites use AES-256-GCM (unused but fixed)."""
    return hpke.Context(kem, hpke.AEAD_AES256GCM, _shared_secret(kem, secret, enc), info)


def export_context(info, direction, feature_id):
    """§5.3: "<info>-HostToAccessory-<featureID>" or "<info>-AccessoryToHost-<featureID>"."""
    return info + ("-%s-%s" % (direction, feature_id)).encode("utf-8")
