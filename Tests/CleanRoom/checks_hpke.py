"""Public vectors: RFC 9180 P-256, X-Wing KEM (draft-06), HPKE with X-Wing (draft-ietf-hpke-pq)."""
import hashlib

import hpke
import mlkem
import p256
import xwing


def h(text):
    return bytes.fromhex(text)


def check_hpke_vector(c, i, v):
    label = "vector %d (kem 0x%04x, aead 0x%04x)" % (i, v["kem_id"], v["aead_id"])
    c.check("%s mode" % label, 0, v["mode"])
    sk = h(v["skRm"])
    if v["kem_id"] == hpke.KEM_P256:
        c.check("%s pkRm from skRm" % label, h(v["pkRm"]), p256.public_key(sk))
    else:
        c.check("%s pkRm from the seed" % label, h(v["pkRm"]), xwing.public_key(sk))
    ctx = hpke.setup_base_r(v["kem_id"], v["aead_id"], h(v["enc"]), sk, h(v["info"]))
    c.check("%s exporter_secret" % label, h(v["exporter_secret"]), ctx.exporter_secret)
    for j, e in enumerate(v["exports"]):
        c.check("%s export %d" % (label, j), h(e["exported_value"]),
                ctx.export(h(e["exporter_context"]), e["L"]))
    for j, e in enumerate(v["encryptions"]):
        c.check("%s encryption %d nonce" % (label, j), h(e["nonce"]), ctx.next_nonce())
        c.check("%s encryption %d opens" % (label, j), h(e["pt"]), ctx.open(h(e["aad"]), h(e["ct"])))


def check_hpke_file(c, data):
    for i, v in enumerate(data["vectors"]):
        check_hpke_vector(c, i, v)


def check_xwing_kem(c, data):
    for i, v in enumerate(data["vectors"]):
        seed = h(v["seed"])
        pk = xwing.public_key(seed)
        c.check("vector %d pk" % i, h(v["pk"]), pk)
        ss, ct = xwing.encaps_derand(h(v["pk"]), h(v["eseed"]))
        c.check("vector %d ct from eseed" % i, h(v["ct"]), ct)
        c.check("vector %d ss from encapsulation" % i, h(v["ss"]), ss)
        c.check("vector %d ss from decapsulation" % i, h(v["ss"]), xwing.decaps(seed, h(v["ct"])))
        # Implicit rejection: a changed ML-KEM ciphertext decapsulates to J(z ‖ c), not an error.
        bad = bytearray(h(v["ct"]))
        bad[0] ^= 1
        dk_m = xwing.expand_key(seed)[0]
        z = dk_m[-32:]
        c.check("vector %d ML-KEM implicit rejection" % i,
                hashlib.shake_256(z + bytes(bad[:mlkem.CT_LEN])).digest(32),
                mlkem.decaps(dk_m, bytes(bad[:mlkem.CT_LEN])))
