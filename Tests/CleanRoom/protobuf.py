"""A minimal proto3 binary codec driven by schema.py, and proto3 JSON rendering.

Decoded messages are dicts holding only the fields present on the wire (plus repeated fields
as lists). Unknown fields are skipped, as §1 requires. Packed and unpacked repeated scalars
are both accepted (§9).
"""
import base64

from schema import ENUMS, MESSAGES


class DecodeError(ValueError):
    pass


_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_WIRE_TYPE = {"uint32": _VARINT, "uint64": _VARINT, "int32": _VARINT, "int64": _VARINT,
              "sint64": _VARINT, "bool": _VARINT, "fixed64": _I64, "string": _LEN,
              "bytes": _LEN}
_SIXTY_FOUR = {"uint64", "int64", "sint64", "fixed64"}


def _wire_type(ftype):
    if ftype.startswith("enum:"):
        return _VARINT
    if ftype.startswith("msg:"):
        return _LEN
    return _WIRE_TYPE[ftype]


def read_varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")
    return result & ((1 << 64) - 1), pos


def _fields(name):
    try:
        return {f[0]: f for f in MESSAGES[name]}
    except KeyError:
        raise ValueError("no message %r in the schema" % name) from None


def _scalar(ftype, raw):
    if ftype == "sint64":
        return (raw >> 1) ^ -(raw & 1)
    if ftype in ("int64", "int32") and raw >= 1 << 63:
        return raw - (1 << 64)
    if ftype == "uint32" or ftype == "int32" or ftype.startswith("enum:"):
        raw &= 0xFFFFFFFF
        return raw - (1 << 32) if ftype != "uint32" and raw >= 1 << 31 else raw
    if ftype == "bool":
        return raw != 0
    return raw


def decode(name, buf):
    fields = _fields(name)
    msg = {}
    pos = 0
    buf = bytes(buf)
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        number, wt = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0 in %s" % name)
        if wt == _VARINT:
            raw, pos = read_varint(buf, pos)
        elif wt == _I64:
            if pos + 8 > len(buf):
                raise DecodeError("truncated fixed64 in %s" % name)
            raw, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wt == _I32:
            if pos + 4 > len(buf):
                raise DecodeError("truncated fixed32 in %s" % name)
            raw, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        elif wt == _LEN:
            length, pos = read_varint(buf, pos)
            if pos + length > len(buf):
                raise DecodeError("length-delimited field %d of %s runs past the end" % (number, name))
            raw, pos = buf[pos:pos + length], pos + length
        else:
            raise DecodeError("wire type %d in %s" % (wt, name))
        if number not in fields:
            continue  # unknown field: skip
        _, fname, ftype, label = fields[number]
        expected = _wire_type(ftype)
        if label == "repeated" and wt == _LEN and expected != _LEN:
            values = []
            p = 0
            while p < len(raw):  # packed
                v, p = read_varint(raw, p) if expected == _VARINT else (
                    int.from_bytes(raw[p:p + 8], "little"), p + 8)
                values.append(_scalar(ftype, v))
            msg.setdefault(fname, []).extend(values)
            continue
        if wt != expected:
            raise DecodeError("field %s.%s has wire type %d, expected %d" % (name, fname, wt, expected))
        if ftype.startswith("msg:"):
            sub = ftype[4:]
            if label == "repeated":
                value = decode(sub, raw)
            elif fname in msg and not label.startswith("oneof"):
                # A singular message seen twice: later fields win (a shallow merge, enough here).
                value = msg[fname]
                value.update(decode(sub, raw))
            else:
                value = decode(sub, raw)
        elif ftype == "string":
            try:
                value = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DecodeError("field %s.%s is not UTF-8" % (name, fname)) from None
        elif ftype == "bytes":
            value = raw
        else:
            value = _scalar(ftype, raw)
        if label == "repeated":
            msg.setdefault(fname, []).append(value)
        else:
            if label.startswith("oneof:"):
                for other in MESSAGES[name]:  # the last member seen wins
                    if other[3] == label and other[1] != fname:
                        msg.pop(other[1], None)
            msg[fname] = value
    return msg


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _encode_value(ftype, value):
    if ftype.startswith("msg:"):
        return encode(ftype[4:], value)
    if ftype == "string":
        return value.encode("utf-8")
    if ftype == "bytes":
        return bytes(value)
    if ftype == "fixed64":
        return value.to_bytes(8, "little")
    if ftype == "sint64":
        return _varint((value << 1) ^ (value >> 63))
    if ftype == "bool":
        return _varint(1 if value else 0)
    return _varint(value)


def _is_default(ftype, value):
    if ftype.startswith("msg:"):
        return False
    return value in (0, False, "", b"")


def encode(name, msg):
    """Fields in number order; proto3 implicit-presence fields at their default are left out,
    repeated scalars are packed, as proto3 encoders write them."""
    out = bytearray()
    for number, fname, ftype, label in MESSAGES[name]:
        if fname not in msg:
            continue
        value = msg[fname]
        wt = _wire_type(ftype)
        if label == "repeated":
            if not value:
                continue
            if wt != _LEN:
                packed = b"".join(_encode_value(ftype, v) for v in value)
                out += _varint(number << 3 | _LEN) + _varint(len(packed)) + packed
                continue
            for v in value:
                data = _encode_value(ftype, v)
                out += _varint(number << 3 | _LEN) + _varint(len(data)) + data
            continue
        if label == "singular" and _is_default(ftype, value):
            continue
        data = _encode_value(ftype, value)
        if wt == _LEN:
            out += _varint(number << 3 | _LEN) + _varint(len(data)) + data
        else:
            out += _varint(number << 3 | wt) + data
    return bytes(out)


def to_json(name, msg):
    """proto3 JSON with the .proto field names: 64-bit integers as strings, bytes as base64,
    enums by name, implicit-presence fields at their default left out."""
    out = {}
    for number, fname, ftype, label in MESSAGES[name]:
        if fname not in msg:
            continue
        value = msg[fname]
        if label == "repeated":
            if value:
                out[fname] = [_json_value(ftype, v) for v in value]
        elif label == "singular" and _is_default(ftype, value):
            continue
        else:
            out[fname] = _json_value(ftype, value)
    return out


def _json_value(ftype, value):
    if ftype.startswith("msg:"):
        return to_json(ftype[4:], value)
    if ftype.startswith("enum:"):
        return ENUMS[ftype[5:]].get(value, value)
    if ftype in _SIXTY_FOUR:
        return str(value)
    if ftype == "bytes":
        return base64.b64encode(value).decode("ascii")
    return value
