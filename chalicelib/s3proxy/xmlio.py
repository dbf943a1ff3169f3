"""S3's XML: building response documents and reading the few request bodies S3 operations send.

Request bodies are parsed with the standard library's expat-based parser, which resolves no external entities
and (expat >= 2.4.1) refuses exponential entity expansion; the namespace S3 clients put on elements is ignored.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import formatdate

S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
# Bodies of DeleteObjects (1,000 keys of 1 KiB) and CompleteMultipartUpload (10,000 parts) fit well within this.
MAX_XML_BODY = 4 * 1024 * 1024


class MalformedXml(ValueError):
    """The body is not the XML document the operation expects."""


def element(tag: str, text: str | int | None = None, children: Iterable[ET.Element] = ()) -> ET.Element:
    node = ET.Element(tag)
    if text is not None:
        node.text = str(text)
    node.extend(children)
    return node


def document(tag: str, children: Iterable[ET.Element]) -> bytes:
    """A response document in S3's namespace."""
    root = element(tag, children=children)
    root.set("xmlns", S3_NAMESPACE)
    return render(root)


def render(root: ET.Element) -> bytes:
    body = ET.tostring(root, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + bytes(body)


def iso8601(seconds: float) -> str:
    """S3's timestamp in listings: 2024-01-02T03:04:05.000Z."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def http_date(seconds: float) -> str:
    return formatdate(seconds, usegmt=True)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse(body: bytes, root_tag: str) -> ET.Element:
    """The root element, which must be ``root_tag`` (namespace ignored). Raises MalformedXml."""
    if not body or len(body) > MAX_XML_BODY:
        raise MalformedXml("empty or oversized XML body")
    if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
        raise MalformedXml("document type declarations are not accepted")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise MalformedXml(str(e)) from e
    if _local(root.tag) != root_tag:
        raise MalformedXml(f"expected <{root_tag}>, got <{_local(root.tag)}>")
    return root


def children(node: ET.Element, tag: str) -> list[ET.Element]:
    return [child for child in node if _local(child.tag) == tag]


def child_text(node: ET.Element, tag: str, default: str | None = None) -> str | None:
    found = children(node, tag)
    if not found:
        return default
    return found[0].text or ""
