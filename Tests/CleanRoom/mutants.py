"""--mutants: single changes to in-memory copies of the vectors, each of which the checks must
catch. The files on disk are never written."""
import copy

import suite
from checker import Checker


def _flip(text, byte=0, bit=0):
    """Hex text with one bit flipped; byte counts from the end when negative."""
    data = bytearray(bytes.fromhex(text))
    data[byte] ^= 1 << bit
    return data.hex()


def _set(path, fn):
    def mutate(v):
        obj = v
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = fn(obj[path[-1]])
    return mutate


def _swap_outcome(v):
    d = v["ratchet"]["chains"][0]["deliveries"]
    other = next(i for i, x in enumerate(d) if x["outcome"] != d[0]["outcome"])
    d[0]["outcome"], d[other]["outcome"] = d[other]["outcome"], d[0]["outcome"]


def _replay_to_fresh(v):
    chain = v["ratchet"]["chains"][0]
    replay = next(d for d in chain["deliveries"] if d["outcome"] == "replayed")
    replay["index"] = max(m["index"] for m in chain["messages"])


def _forgery_made_genuine(v):
    chain = v["ratchet"]["chains"][0]
    forged = next(d for d in chain["deliveries"] if d["outcome"] == "decryptFailed" and "message" in d)
    forged["message"] = next(m["message"] for m in chain["messages"] if m["index"] == forged["index"])


def _too_far_marked_opened(v):
    d = next(d for d in v["ratchet"]["chains"][0]["deliveries"] if d["outcome"] == "tooFarAhead")
    d["outcome"] = "opened"


def _dropped_key_marked_opened(v):
    # The window's edge: a replay of an index never opened can only mean its key was dropped.
    opened = set()
    for d in v["ratchet"]["chains"][0]["deliveries"]:
        if d["outcome"] == "replayed" and d["index"] not in opened:
            d["outcome"] = "opened"
            return
        if d["outcome"] == "opened":
            opened.add(d["index"])
    raise KeyError("no replay of a dropped key in the host's deliveries")


def _reorder_framing_chunks(v):
    chunks = v["golden"]["framing"][2]["chunks"]
    chunks[1], chunks[2] = chunks[2], chunks[1]


G0 = ("golden", "exchanges", 0)
G1 = ("golden", "exchanges", 1)
M0 = G0 + ("messages", 0)
R = ("ratchet",)
H2A = R + ("chains", 0)

MUTANTS = [
    ("X-Wing accessory public key, bit flipped", _set(G0 + ("accessoryPublicKey",), lambda x: _flip(x, 5))),
    ("X-Wing keyID changed", _set(G0 + ("keyID",), lambda x: _flip(x, 7))),
    ("P-256 keyID changed", _set(G1 + ("keyID",), lambda x: _flip(x, 0, 7))),
    ("X-Wing encapsulated key, bit flipped", _set(G0 + ("encapsulatedKey",), lambda x: _flip(x, 100))),
    ("P-256 encapsulated key, last byte flipped", _set(G1 + ("encapsulatedKey",), lambda x: _flip(x, -1))),
    ("X-Wing exchangeID byte order reversed", _set(G0 + ("exchangeID",), lambda x: bytes.fromhex(x)[::-1].hex())),
    ("host → accessory key, bit flipped", _set(G0 + ("hostToAccessoryKey",), lambda x: _flip(x, 31))),
    ("P-256 accessory → host key, bit flipped", _set(G1 + ("accessoryToHostKey",), lambda x: _flip(x, 3))),
    ("identifier in lowercase (info must be byte for byte)", _set(G0 + ("identifier",), str.lower)),
    ("featureID changed", _set(G1 + ("featureID",), lambda x: x.replace("C3", "C4", 1))),
    ("ciphertext tag, bit flipped", _set(M0 + ("ciphertext",), lambda x: _flip(x, -1))),
    ("ciphertext nonce, bit flipped", _set(G1 + ("messages", 2, "ciphertext"), lambda x: _flip(x, 0))),
    ("receipt plaintext: alerted false", _set(G0 + ("messages", 5, "plaintext"), lambda x: x[:-2] + "00")),
    ("decoded: sequence changed", _set(M0 + ("decoded",), lambda d: {**d, "sequence": "9"})),
    ("decoded: action title changed", _set(M0 + ("decoded", "add", "notification", "actions", 0, "title"), lambda x: "Answer")),
    ("decoded: enum renamed", _set(G0 + ("messages", 2, "decoded", "add", "alerting", "kind"), lambda x: "KIND_TIMER")),
    ("decoded: empty sound dropped", _set(M0 + ("decoded", "add", "alerting"), lambda d: {k: x for k, x in d.items() if k != "sound"})),
    ("decoded: delivery_date_ms as a number", _set(M0 + ("decoded", "add", "notification", "delivery_date_ms"), int)),
    ("decoded: body text changed", _set(M0 + ("decoded", "add", "notification", "body", "runs", 0, "text"), lambda x: x + "!")),
    ("framing: payload byte changed", _set(("golden", "framing", 1, "chunks", 1), lambda x: _flip(x, 3))),
    ("framing: chunks reordered", _reorder_framing_chunks),
    ("framing: chunkLength changed", _set(("golden", "framing", 3, "chunkLength"), lambda x: x + 1)),
    ("framing: message one byte shorter", _set(("golden", "framing", 0, "message"), lambda x: x[:-2])),
    ("RFC 9180: exporter_secret flipped", _set(("rfc9180", "vectors", 0, "exporter_secret"), lambda x: _flip(x, 9))),
    ("RFC 9180: export value flipped", _set(("rfc9180", "vectors", 1, "exports", 2, "exported_value"), lambda x: _flip(x, -1))),
    ("RFC 9180: encryption ct flipped", _set(("rfc9180", "vectors", 1, "encryptions", 1, "ct"), lambda x: _flip(x, 2))),
    ("RFC 9180: info changed", _set(("rfc9180", "vectors", 0, "info"), lambda x: _flip(x, 0))),
    ("X-Wing KEM: ct flipped", _set(("xwing_kem", "vectors", 1, "ct"), lambda x: _flip(x, 500))),
    ("X-Wing KEM: ss flipped", _set(("xwing_kem", "vectors", 2, "ss"), lambda x: _flip(x, 0))),
    ("X-Wing KEM: eseed flipped", _set(("xwing_kem", "vectors", 0, "eseed"), lambda x: _flip(x, 40))),
    ("HPKE X-Wing: enc flipped", _set(("hpke_xwing", "vectors", 0, "enc"), lambda x: _flip(x, -3))),
    ("HPKE X-Wing: export flipped", _set(("hpke_xwing", "vectors", 0, "exports", 0, "exported_value"), lambda x: _flip(x, 4))),
    ("ratchet: internetKeyID wrong", _set(R + ("internetKeyID",), lambda x: _flip(x, 0))),
    ("ratchet: encapsulated key flipped", _set(R + ("encapsulatedKey",), lambda x: _flip(x, 1110))),
    ("ratchet: chain key flipped", _set(H2A + ("chainKey",), lambda x: _flip(x, 0))),
    ("ratchet: step info index changed", _set(H2A + ("steps", 1, "info"), lambda x: _flip(x, -4))),
    ("ratchet: nextChainKey flipped", _set(H2A + ("steps", 2, "nextChainKey"), lambda x: _flip(x, 8))),
    ("ratchet: message index field changed", _set(H2A + ("messages", 1, "message"), lambda x: _flip(x, 4, 1))),
    ("ratchet: message key ID changed", _set(("ratchet", "chains", 1, "messages", 0, "message"), lambda x: _flip(x, 2))),
    ("ratchet: nonce changed", _set(H2A + ("messages", 3, "nonce"), lambda x: _flip(x, 11))),
    ("ratchet: delivery outcomes swapped", _swap_outcome),
    ("ratchet: a replayed delivery names a message not yet delivered", _replay_to_fresh),
    ("ratchet: a forgery delivery carries the genuine message", _forgery_made_genuine),
    ("ratchet: tooFarAhead marked opened", _too_far_marked_opened),
    ("ratchet: the dropped key's replay marked opened (50,000-key window)", _dropped_key_marked_opened),
    ("ratchet: replay marked opened", _set(("ratchet", "chains", 1, "deliveries", 1, "outcome"), lambda x: "opened")),
    ("ratchet: delivery message overridden with a wrong key ID",
     _set(H2A + ("deliveries", 0), lambda d: {**d, "message": "00000000" + "00" * 40})),
]


def run(vectors):
    caught = 0
    for name, mutate in MUTANTS:
        v = copy.deepcopy(vectors)
        try:
            mutate(v)
        except (KeyError, IndexError, StopIteration, TypeError) as exc:
            print("mutant %r does not apply to these vectors (%s): counted as survived" % (name, exc))
            continue
        c = Checker(quiet=True)
        suite.run(c, v, with_rules=False)
        if c.failed:
            caught += 1
            first = next(f for g in c.groups for f in g[2])
            print("caught: %s  [%s]" % (name, first[:110]))
        else:
            print("SURVIVED: %s" % name)
    total = len(MUTANTS)
    print("%d of %d mutants caught" % (caught, total))
    return 0 if caught == total else 1
