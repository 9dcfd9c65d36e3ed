"""TLS material for the sandbox's own servers (Dex, Kueue's webhook): a CA and a serving
certificate for 127.0.0.1 it signs, made fresh at each start (ECDSA P-256); and the real
node's client certificate, signed by the cluster's CA (`client_certificate`)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import warnings

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.utils import CryptographyDeprecationWarning
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _signed(
    subject: str,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    validity: tuple[dt.datetime, dt.datetime],
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
    )


def loopback_certificates(
    ca_name: str, leaf_name: str, now: dt.datetime, days: int
) -> tuple[bytes, bytes, bytes]:
    """(CA certificate, serving certificate, serving key) as PEM: a CA named `ca_name` (may
    sign leaves only), and a leaf named `leaf_name` for 127.0.0.1 and localhost (server
    authentication), both valid from five minutes before `now` for `days` days."""
    validity = (now - dt.timedelta(minutes=5), now + dt.timedelta(days=days))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca_name)])
    usage = x509.KeyUsage(True, False, False, False, False, True, True, False, False)
    ca = (
        _signed(ca_name, issuer, ca_key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)  # digital signature, certificate and CRL signing
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    leaf = (
        _signed(leaf_name, issuer, key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    pem = serialization.Encoding.PEM
    return ca.public_bytes(pem), leaf.public_bytes(pem), key_pem


def client_certificate(
    ca_cert_pem: bytes, ca_key_pem: bytes, user: str, group: str, now: dt.datetime, days: int
) -> tuple[bytes, bytes]:
    """(certificate, key) as PEM: a client certificate for Kubernetes user `user` in group
    `group` (CN and O, the API server's x509 rule), signed by the CA given as PEM, valid from
    five minutes before `now` for `days` days. Raises ValueError when the CA key is not an
    EC or RSA private key."""
    with warnings.catch_warnings():  # kwokctl's CA has a negative serial number
        warnings.simplefilter("ignore", CryptographyDeprecationWarning)
        ca = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError("the sandbox CA's key is neither EC nor RSA")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, group),
            x509.NameAttribute(NameOID.COMMON_NAME, user),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem
