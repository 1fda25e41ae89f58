"""Loads the vector files and runs every group of checks on them."""
import json
import os

import checks_golden
import checks_hpke
import checks_ratchet
import checks_rules

FILES = {
    "golden": "golden-v1.json",
    "ratchet": "ratchet-v1.json",
    "rfc9180": "hpke-rfc9180-p256.json",
    "hpke_xwing": "hpke-xwing.json",
    "xwing_kem": "xwing-kem.json",
}

_SUITE_NAMES = {"xwing": "X-Wing", "p256": "P-256"}


def load(directory):
    vectors = {}
    for key, name in FILES.items():
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            vectors[key] = json.load(f)
    return vectors


def run(c, v, with_rules=True):
    for ex in v["golden"]["exchanges"]:
        name = _SUITE_NAMES.get(str(ex.get("suite")).lower(), ex.get("suite"))
        c.run_group("golden %s exchange (§8 steps 1–7)" % name, checks_golden.check_exchange, ex)
    c.run_group("golden framing (§8 step 8)", checks_golden.check_framing, v["golden"]["framing"])
    xwing_exchange = next((ex for ex in v["golden"]["exchanges"] if ex["suite"].lower() == "xwing"), None)
    c.run_group("golden end-to-end remove-all and KeyConfirm (§8, §4.2)",
                checks_golden.check_end_to_end, xwing_exchange)
    c.run_group("RFC 9180 DHKEM(P-256) HPKE vectors", checks_hpke.check_hpke_file, v["rfc9180"])
    c.run_group("X-Wing KEM vectors (draft-06)", checks_hpke.check_xwing_kem, v["xwing_kem"])
    c.run_group("HPKE X-Wing vector (draft-ietf-hpke-pq)", checks_hpke.check_hpke_file, v["hpke_xwing"])
    r = v["ratchet"]
    c.run_group("ratchet keys (§10.5 steps 1–2)", checks_ratchet.check_keys, r)
    c.run_group("ratchet steps (§10.5 step 3)", checks_ratchet.check_steps, r)
    c.run_group("ratchet sealing (§10.5 step 4)", checks_ratchet.check_sealing, r)
    for chain in r["chains"]:
        c.run_group("ratchet deliveries %s (§10.5 step 5)" % chain["direction"],
                    checks_ratchet.check_deliveries, r, chain)
    if with_rules:
        c.run_group("reassembler rules (§3.1, self-made chunks)", checks_rules.check_reassembler)
        c.run_group("TCP stream framing (§3.2, self-made frames)", checks_rules.check_stream)
        c.run_group("ratchet receiver refusals (§10.4, on the vector's chain key)",
                    checks_rules.check_receiver, r)
