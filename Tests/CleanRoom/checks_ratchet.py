"""ratchet-v1.json: PROTOCOL.md §10.5 steps 1–5."""
import accessory
import hpke
import ratchet


def h(text):
    return bytes.fromhex(text)


def check_keys(c, r):
    # Step 1: the accessory key, and the 4-byte internet key ID (SHA-384).
    kem = accessory.kem_for_suite(r["suite"])
    c.check("suite is X-Wing (P-256 has no internet ratchets, §10.1)", hpke.KEM_XWING, kem)
    public = accessory.public_key(kem, h(r["accessorySecret"]))
    c.check("step 1 accessoryPublicKey", h(r["accessoryPublicKey"]), public)
    c.check("step 1 internetKeyID = SHA-384(public key)[0..4]", h(r["internetKeyID"]),
            accessory.internet_key_id(h(r["accessoryPublicKey"])))
    c.check("bluetoothUUID is KeyMaterial.identifier (§10.1)", r["identifier"], r["bluetoothUUID"])
    # Step 2: one recipient, one export per direction; no feature in the context.
    info = accessory.hpke_info(r["suite"], r["version"], r["identifier"])
    ctx = accessory.recipient(kem, h(r["accessorySecret"]), h(r["encapsulatedKey"]), info)
    for chain in r["chains"]:
        context = "AccessoryInternetKey-%s-%s" % (chain["direction"], r["bluetoothUUID"])
        c.check("step 2 %s exportContext" % chain["direction"], context, chain["exportContext"])
        c.check("step 2 %s chainKey" % chain["direction"], h(chain["chainKey"]),
                ctx.export(context.encode("utf-8")))


def check_steps(c, r):
    # Step 3: HKDF-Expand from each chain key in turn.
    for chain in r["chains"]:
        d = chain["direction"]
        ck, index = h(chain["chainKey"]), 0
        for s in sorted(chain["steps"], key=lambda s: s["index"]):
            while index < s["index"]:  # steps need not be consecutive
                ck, index = ratchet.step(ck, index)[1], index + 1
            n = s["index"]
            c.check("%s step %d info" % (d, n), h(s["info"]), ratchet.step_info(n))
            mk, ck_next = ratchet.step(ck, n)
            c.check("%s step %d messageKey" % (d, n), h(s["messageKey"]), mk)
            c.check("%s step %d nextChainKey" % (d, n), h(s["nextChainKey"]), ck_next)
            ck, index = ck_next, n + 1


def check_sealing(c, r):
    # Step 4: a sender from chainKey seals each plaintext under its fixed nonce.
    key_id = accessory.internet_key_id(h(r["accessoryPublicKey"]))
    for chain in r["chains"]:
        sender = ratchet.Sender(key_id, h(chain["chainKey"]))
        for m in sorted(chain["messages"], key=lambda m: m["index"]):
            sender.skip_to(m["index"])
            got = sender.seal(h(m["plaintext"]), h(m["nonce"]))
            c.check("%s message %d" % (chain["direction"], m["index"]), h(m["message"]), got)


def check_deliveries(c, r, chain):
    # Step 5: a fresh receiver per chain, deliveries in order. A delivery's own `message`
    # replaces the recorded one; `index` is the index its bytes carry either way.
    key_id = accessory.internet_key_id(h(r["accessoryPublicKey"]))
    receiver = ratchet.Receiver(key_id, h(chain["chainKey"]))
    recorded = {m["index"]: m for m in chain["messages"]}
    for k, d in enumerate(chain["deliveries"]):
        label = "delivery %d (index %d%s)" % (k, d["index"], "; " + d["note"] if d.get("note") else "")
        if "message" in d:
            message = h(d["message"])
        elif d["index"] in recorded:
            message = h(recorded[d["index"]]["message"])
        else:
            c.fail("%s: no `message`, and no messages[] entry with this index" % label)
            continue
        if len(message) >= 8:
            c.check("%s carries its index" % label, d["index"], int.from_bytes(message[4:8], "little"))
        outcome, plaintext = receiver.receive(message)
        c.check("%s outcome" % label, d["outcome"], outcome)
        if outcome == "opened" and d["outcome"] == "opened":
            if d["index"] in recorded:
                c.check("%s plaintext" % label, h(recorded[d["index"]]["plaintext"]), plaintext)
            else:
                c.fail("%s opened, but no messages[] entry has its plaintext" % label)
