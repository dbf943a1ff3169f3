"""Everything that lets the stack's own calls skip the network and the parts of the request pipeline that only a
network needs, installed and removed together (lakelet/stack/local.py): AWS calls answered in process
(inprocess_aws.py, inprocess_signing.py), DynamoDB's calls and S3's object calls through a short pipeline
(inprocess_lean.py), the stack's own PutItem past the WSGI chain (inprocess_direct.py), and the API's and the
gateway's request headers read by http.server without the email parser (fast_headers.py)."""

from __future__ import annotations

from lakelet.stack import fast_headers, inprocess_aws, inprocess_direct, inprocess_lean, inprocess_signing


def install(moto_url: str, chain: inprocess_direct.Chain, access_key_id: str) -> None:
    """For calls to ``moto_url`` signed with ``access_key_id``, answered by ``chain``'s server."""
    inprocess_aws.install(moto_url, chain.server)
    inprocess_signing.install(access_key_id)
    inprocess_lean.install(access_key_id)
    inprocess_direct.install(chain)
    fast_headers.install()


def uninstall() -> None:
    inprocess_aws.uninstall()  # before moto goes: its clients would send to a closed port
    inprocess_signing.uninstall()
    inprocess_direct.uninstall()
    inprocess_lean.uninstall()
    fast_headers.uninstall()
