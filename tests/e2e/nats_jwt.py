#!/usr/bin/env python3
"""Mints NATS decentralized-auth credentials for the tests, as nsc would.

  nats_jwt.py DIR

writes into DIR:
  server.conf   lines for nats-server: operator mode, a memory resolver
                preloaded with a system account and an account "CDC" with
                JetStream enabled
  user.creds    a user of CDC that may publish and subscribe anywhere
  nopub.creds   a user of CDC denied publishing to denied.>
  rogue.creds   a user signed by an account the server does not know
Keys are Ed25519 (the openssl command signs; Python's standard library
has no Ed25519), encoded as nkeys: base32 of a prefix byte, the key and a
CRC-16/XMODEM. JWTs are ed25519-nkey signed, claims version 2.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import time

PREFIX = {"operator": 14 << 3, "account": 0, "user": 20 << 3}
PREFIX_SEED = 18 << 3


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def b32(raw):
    return base64.b32encode(raw).decode().rstrip("=")


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class Key:
    """An Ed25519 key held as a PEM file for openssl."""

    def __init__(self, directory, name, kind):
        self.kind = kind
        self.pem = os.path.join(directory, name + ".pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519",
                        "-out", self.pem], check=True)
        der = subprocess.run(["openssl", "pkey", "-in", self.pem, "-outform",
                              "DER"], check=True, capture_output=True).stdout
        self.seed_raw = der[-32:]  # PKCS#8: the private key ends it
        pub = subprocess.run(["openssl", "pkey", "-in", self.pem, "-pubout",
                              "-outform", "DER"], check=True,
                             capture_output=True).stdout
        self.pub_raw = pub[-32:]

    def public(self):
        raw = bytes([PREFIX[self.kind]]) + self.pub_raw
        return b32(raw + crc16(raw).to_bytes(2, "little"))

    def seed(self):
        p = PREFIX[self.kind]
        raw = bytes([PREFIX_SEED | (p >> 5), (p & 31) << 3]) + self.seed_raw
        return b32(raw + crc16(raw).to_bytes(2, "little"))

    def sign(self, data):
        # One-shot Ed25519 signing wants a file whose size it can read.
        message = self.pem + ".msg"
        with open(message, "wb") as f:
            f.write(data)
        return subprocess.run(
            ["openssl", "pkeyutl", "-sign", "-inkey", self.pem, "-rawin",
             "-in", message], check=True, capture_output=True).stdout


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()), "iss": issuer.public(), "name": name,
              "sub": subject.public(), "nats": dict(nats, version=2)}
    claims["jti"] = b32(hashlib.sha256(
        json.dumps(claims, sort_keys=True).encode()).digest())
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    signed = (head + "." + body).encode()
    return head + "." + body + "." + b64url(issuer.sign(signed))


UNLIMITED = {"subs": -1, "data": -1, "payload": -1, "imports": -1,
             "exports": -1, "wildcards": True, "conn": -1, "leaf": -1}


def account_jwt(operator, account, name, jetstream):
    limits = dict(UNLIMITED)
    if jetstream:
        limits.update({"mem_storage": -1, "disk_storage": -1, "streams": -1,
                       "consumer": -1})
    return jwt(operator, account, name,
               {"type": "account", "limits": limits,
                "default_permissions": {"pub": {}, "sub": {}}})


def creds(path, account, user, name, pub=None):
    token = jwt(account, user, name,
                {"type": "user", "pub": pub or {}, "sub": {}, "subs": -1,
                 "data": -1, "payload": -1})
    with open(path, "w") as f:
        f.write("-----BEGIN NATS USER JWT-----\n%s\n"
                "------END NATS USER JWT------\n\n"
                "-----BEGIN USER NKEY SEED-----\n%s\n"
                "------END USER NKEY SEED------\n" % (token, user.seed()))
    os.chmod(path, 0o600)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    operator = Key(d, "operator", "operator")
    system = Key(d, "sys", "account")
    cdc = Key(d, "cdc", "account")
    rogue_account = Key(d, "rogue_account", "account")
    op_jwt = jwt(operator, operator, "test-operator", {"type": "operator"})
    with open(os.path.join(d, "operator.jwt"), "w") as f:
        f.write(op_jwt)
    with open(os.path.join(d, "server.conf"), "w") as f:
        f.write('operator: "%s"\n' % os.path.join(d, "operator.jwt"))
        f.write("system_account: %s\n" % system.public())
        f.write("resolver: MEMORY\nresolver_preload: {\n")
        f.write("  %s: %s\n" % (system.public(),
                                account_jwt(operator, system, "SYS", False)))
        f.write("  %s: %s\n" % (cdc.public(),
                                account_jwt(operator, cdc, "CDC", True)))
        f.write("}\n")
    creds(os.path.join(d, "user.creds"), cdc, Key(d, "user", "user"), "sink")
    creds(os.path.join(d, "nopub.creds"), cdc, Key(d, "nopub", "user"),
          "nopub", pub={"deny": ["denied.>"]})
    creds(os.path.join(d, "rogue.creds"), rogue_account,
          Key(d, "rogue", "user"), "rogue")


if __name__ == "__main__":
    main()
