"""The internet transport's symmetric ratchet (§10.2–§10.4): one step, a sender, and the
receiver with its refusal outcomes.
"""
import functools

import aes_gcm
from hpke import hkdf_expand

INFO_PREFIX = b"AccessoryTransportSecurity-RatchetKeys-"
MAX_SKIPPED = 50000
LAST_INDEX = 0xFFFFFFFF
HEADER_LEN = 8
MIN_MESSAGE_LEN = HEADER_LEN + 12 + 16  # 36: empty plaintext


def step_info(index):
    return INFO_PREFIX + index.to_bytes(4, "little")


@functools.lru_cache(maxsize=1 << 18)  # --mutants walks the same 50,000-step chains again
def step(chain_key, index):
    """Returns (message_key[index], chain_key[index + 1]): HKDF-Expand only, no Extract."""
    out = hkdf_expand(chain_key, step_info(index), 64)
    return out[:32], out[32:]


def build_message(key_id, index, sealed):
    return key_id + index.to_bytes(4, "little") + sealed


class Sender:
    def __init__(self, key_id, chain_key, n=0):
        self.key_id = key_id
        self.chain_key = chain_key
        self.n = n

    def skip_to(self, index):
        while self.n < index:
            self.chain_key = step(self.chain_key, self.n)[1]
            self.n += 1

    def seal(self, plaintext, nonce):
        if self.n == LAST_INDEX:
            raise ValueError("ratchet exhausted: a new key exchange is needed")
        mk, self.chain_key = step(self.chain_key, self.n)
        message = build_message(self.key_id, self.n, aes_gcm.seal_framed(mk, nonce, plaintext))
        self.n += 1
        return message


class Receiver:
    """§10.4. receive() returns (outcome, plaintext); outcome is "opened" or one of the refusals
    malformed, unknownKeyID, replayed, tooFarAhead, decryptFailed. A refusal changes nothing."""

    def __init__(self, key_id, chain_key, max_skipped=MAX_SKIPPED):
        self.key_id = key_id
        self.chain_key = chain_key
        self.n = 0
        self.skipped = {}  # index → message key, insertion order is index order
        self.max_skipped = max_skipped

    def receive(self, message):
        if len(message) < MIN_MESSAGE_LEN:
            return "malformed", None
        if message[:4] != self.key_id:
            return "unknownKeyID", None
        i = int.from_bytes(message[4:8], "little")
        body = message[8:]
        if i < self.n:
            key = self.skipped.get(i)
            if key is None:
                return "replayed", None
            plaintext = aes_gcm.open_framed(key, body)
            if plaintext is None:
                return "decryptFailed", None
            del self.skipped[i]
            return "opened", plaintext
        if i - self.n > self.max_skipped or i == LAST_INDEX:
            return "tooFarAhead", None
        # Walk on a copy: nothing is kept unless the message authenticates.
        ck = self.chain_key
        new_keys = {}
        for j in range(self.n, i):
            mk, ck = step(ck, j)
            new_keys[j] = mk
        mk, next_ck = step(ck, i)
        plaintext = aes_gcm.open_framed(mk, body)
        if plaintext is None:
            return "decryptFailed", None
        self.skipped.update(new_keys)
        # Keys enter in index order, so the dict's first key is always the lowest index.
        while len(self.skipped) > self.max_skipped:
            del self.skipped[next(iter(self.skipped))]
        self.chain_key = next_ck
        self.n = i + 1
        return "opened", plaintext
