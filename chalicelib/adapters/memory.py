"""In-memory twins of the ports, the reference behaviour the contract suites (tests/contract) hold the AWS
adapters to: graveler's RefStore, StagingStore, BlockStore and WorkflowRunner, the branch protection and
repository metadata stores, auth's store and cipher, and GC's JobStarter. Each is thread-safe where the API tests
use it from several threads, and none persists anything."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from chalicelib.auth import errors as auth_errors
from chalicelib.auth.errors import (
    DecryptionFailed,
    GroupExists,
    GroupNotFound,
    PolicyExists,
    PolicyNotFound,
)
from chalicelib.auth.records import Credential, Group, Policy, Principal, User
from chalicelib.gc.ports import JobRunRequest
from chalicelib.graveler import errors
from chalicelib.graveler.ports import Execution, PutResult
from chalicelib.graveler.protection import ProtectionRules
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Repository,
    RepositoryID,
    RepositoryState,
    Tag,
    TagID,
)

from .memory_staging import MemoryStagingStore

__all__ = [
    "MemoryAuthStore",
    "MemoryBlockStore",
    "MemoryBranchProtectionStore",
    "MemoryCipher",
    "MemoryRefStore",
    "MemoryRepositoryMetadataStore",
    "MemoryStagingStore",
]


def _page(items: dict[str, object], after: str, limit: int) -> list:  # type: ignore[type-arg]
    return [items[k] for k in sorted(items) if k > after][:limit]


class MemoryRefStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._repos: dict[str, Repository] = {}
        self._branches: dict[str, dict[str, Branch]] = {}
        self._tags: dict[str, dict[str, Tag]] = {}
        self._commits: dict[str, dict[str, Commit]] = {}

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        try:
            return self._repos[repo_id]
        except KeyError:
            raise errors.RepositoryNotFound(repo_id) from None

    def create_repository(self, repo: Repository) -> None:
        with self._lock:
            if repo.id in self._repos:
                raise errors.RepositoryExists(repo.id)
            self._repos[repo.id] = repo

    def list_repositories(self, after: str = "", limit: int = 1000) -> list[Repository]:
        return _page(self._repos, after, limit)  # type: ignore[arg-type]

    def delete_repository(self, repo_id: RepositoryID) -> None:
        with self._lock:
            if repo_id not in self._repos:
                raise errors.RepositoryNotFound(repo_id)
            del self._repos[repo_id]
            for table in (self._branches, self._tags, self._commits):
                table.pop(repo_id, None)

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        try:
            return self._branches[repo_id][branch_id]
        except KeyError:
            raise errors.BranchNotFound(branch_id) from None

    def create_branch(self, repo_id: RepositoryID, branch: Branch, generation: str | None = None) -> None:
        with self._lock:
            self._check_generation(repo_id, generation)
            branches = self._branches.setdefault(repo_id, {})
            if branch.id in branches:
                raise errors.BranchExists(branch.id)
            branches[branch.id] = branch

    def _check_generation(self, repo_id: RepositoryID, generation: str | None) -> None:
        """Called with the lock held: refuses a write tied to a generation the repository no longer has."""
        if generation is None:
            return
        repo = self._repos.get(repo_id)
        if repo is None or repo.state is not RepositoryState.ACTIVE or repo.generation != generation:
            raise errors.RepositoryNotFound(f"repository {repo_id} is gone or was created again")

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        with self._lock:
            branches = self._branches.setdefault(repo_id, {})
            stored = branches.get(branch.id)
            if stored != expected or stored is None:
                raise errors.Conflict(f"branch {branch.id} changed concurrently")
            branches[branch.id] = dataclasses.replace(branch, hidden=stored.hidden)

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        with self._lock:
            if self._branches.get(repo_id, {}).pop(branch_id, None) is None:
                raise errors.BranchNotFound(branch_id)

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        return _page(self._branches.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        try:
            return self._tags[repo_id][tag_id]
        except KeyError:
            raise errors.TagNotFound(tag_id) from None

    def create_tag(self, repo_id: RepositoryID, tag: Tag, generation: str | None = None) -> None:
        with self._lock:
            self._check_generation(repo_id, generation)
            tags = self._tags.setdefault(repo_id, {})
            if tag.id in tags:
                raise errors.TagExists(tag.id)
            tags[tag.id] = tag

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        with self._lock:
            if self._tags.get(repo_id, {}).pop(tag_id, None) is None:
                raise errors.TagNotFound(tag_id)

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        return _page(self._tags.get(repo_id, {}), after, limit)  # type: ignore[arg-type]

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        try:
            return self._commits[repo_id][commit_id]
        except KeyError:
            raise errors.CommitNotFound(commit_id) from None

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        with self._lock:
            self._commits.setdefault(repo_id, {}).setdefault(commit.id, commit)

    def delete_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> None:
        with self._lock:
            self._commits.get(repo_id, {}).pop(commit_id, None)

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        ids = sorted(k for k in self._commits.get(repo_id, {}) if k.startswith(prefix))
        return [CommitID(k) for k in ids[:limit]]

    def iterate_commits(self, repo_id: RepositoryID) -> Iterator[Commit]:
        commits = dict(self._commits.get(repo_id, {}))
        for commit_id in sorted(commits):
            yield commits[commit_id]


class MemoryBlockStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.blobs: dict[str, bytes] = {}
        # The ETag S3 would give each blob: the MD5 of its bytes, or for a multipart upload the MD5 of the
        # parts' MD5s with the part count (only those are kept here).
        self._multipart_etags: dict[str, str] = {}
        # upload id -> (address, part number -> bytes)
        self._uploads: dict[str, tuple[str, dict[int, bytes]]] = {}
        self._upload_count = 0
        # A blob's storage class when a test set one (S3 lifecycle rules move objects to others); else STANDARD.
        self.storage_classes: dict[str, str] = {}

    def put(self, address: str, data: bytes) -> PutResult:
        with self._lock:
            self.blobs[address] = bytes(data)
            self._multipart_etags.pop(address, None)
        return PutResult(size=len(data), etag=hashlib.md5(data).hexdigest())

    def put_if_absent(self, address: str, data: bytes) -> bool:
        with self._lock:
            if address in self.blobs:
                return False
            self.blobs[address] = bytes(data)
        return True

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        try:
            data = self.blobs[address]
        except KeyError:
            raise errors.ObjectNotFound(address) from None
        if start is None:
            return data
        return data[start : (len(data) if end is None else end + 1)]

    def exists(self, address: str) -> bool:
        return address in self.blobs

    def stat(self, address: str) -> PutResult:
        with self._lock:
            data = self.blobs.get(address)
            etag = self._multipart_etags.get(address)
        if data is None:
            raise errors.ObjectNotFound(address)
        return PutResult(len(data), etag or hashlib.md5(data).hexdigest())

    def storage_class(self, address: str) -> str:
        with self._lock:
            if address not in self.blobs:
                raise errors.ObjectNotFound(address)
            return self.storage_classes.get(address, "STANDARD")

    def presign_get(self, address: str, expires_seconds: int) -> str:
        return f"https://memory.invalid/{address.removeprefix('s3://')}?expires={expires_seconds}"

    def presign_put(self, address: str, expires_seconds: int, if_none_match: bool = False) -> str:
        condition = "&if-none-match" if if_none_match else ""
        return f"https://memory.invalid/{address.removeprefix('s3://')}?upload{condition}&expires={expires_seconds}"

    def delete(self, address: str) -> None:
        with self._lock:
            self.blobs.pop(address, None)
            self._multipart_etags.pop(address, None)

    # S3's rule for every part of a multipart upload but the last.
    MIN_PART_SIZE = 5 * 1024 * 1024

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        with self._lock:
            found = sorted((a, len(d)) for a, d in self.blobs.items() if a.startswith(prefix))
        yield from found

    def copy(self, source: str, destination: str) -> PutResult:
        return self.put(destination, self.get(source))

    def presign_upload_part(self, address: str, upload_id: str, part_number: int, expires_seconds: int) -> str:
        self._parts(address, upload_id)  # an unknown upload is ObjectNotFound, as S3 would answer the PUT
        where = address.removeprefix("s3://")
        return f"https://memory.invalid/{where}?uploadId={upload_id}&partNumber={part_number}&expires={expires_seconds}"

    def create_multipart_upload(self, address: str) -> str:
        with self._lock:
            self._upload_count += 1
            upload_id = f"memory-upload-{self._upload_count}"
            self._uploads[upload_id] = (address, {})
        return upload_id

    def _parts(self, address: str, upload_id: str) -> dict[int, bytes]:
        upload = self._uploads.get(upload_id)
        if upload is None or upload[0] != address:
            raise errors.ObjectNotFound(f"no multipart upload {upload_id} for {address}")
        return upload[1]

    def upload_part(self, address: str, upload_id: str, part_number: int, data: bytes) -> PutResult:
        if not 1 <= part_number <= 10_000:
            raise errors.Invalid(f"part number {part_number} is outside 1-10000")
        with self._lock:
            self._parts(address, upload_id)[part_number] = bytes(data)
        return PutResult(len(data), hashlib.md5(data).hexdigest())

    def upload_part_copy(
        self, address: str, upload_id: str, part_number: int, source: str, start: int, end: int
    ) -> PutResult:
        data = self.get(source)
        if not 0 <= start <= end < len(data):
            raise errors.Invalid(f"range {start}-{end} is outside the {len(data)} bytes of {source}")
        return self.upload_part(address, upload_id, part_number, data[start : end + 1])

    def list_parts(self, address: str, upload_id: str) -> list[tuple[int, PutResult]]:
        with self._lock:
            parts = dict(self._parts(address, upload_id))
        return [(n, PutResult(len(d), hashlib.md5(d).hexdigest())) for n, d in sorted(parts.items())]

    def complete_multipart_upload(self, address: str, upload_id: str, parts: list[tuple[int, str]]) -> PutResult:
        with self._lock:
            stored = self._parts(address, upload_id)
            if not parts:
                raise errors.Invalid("a multipart upload needs at least one part")
            chosen: list[bytes] = []
            previous = 0
            for index, (number, etag) in enumerate(parts):
                data = stored.get(number)
                if number <= previous:
                    raise errors.Invalid("parts must be listed in ascending order")
                if data is None or hashlib.md5(data).hexdigest() != etag.strip('"'):
                    raise errors.Invalid(f"part {number} is missing or its etag does not match")
                if index < len(parts) - 1 and len(data) < self.MIN_PART_SIZE:
                    raise errors.Invalid(f"part {number} is smaller than {self.MIN_PART_SIZE} bytes")
                chosen.append(data)
                previous = number
            whole = b"".join(chosen)
            digest = hashlib.md5(b"".join(hashlib.md5(d).digest() for d in chosen)).hexdigest()
            self.blobs[address] = whole
            self._multipart_etags[address] = f"{digest}-{len(chosen)}"
            del self._uploads[upload_id]
        return PutResult(len(whole), self._multipart_etags[address])

    def abort_multipart_upload(self, address: str, upload_id: str) -> None:
        with self._lock:
            upload = self._uploads.get(upload_id)
            if upload is not None and upload[0] == address:
                del self._uploads[upload_id]


class MemoryAuthStore:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, User] = {}
        self._credentials: dict[str, Credential] = {}
        self._groups: dict[str, Group] = {}
        self._members: set[tuple[str, str]] = set()  # (group id, user id)
        self._policies: dict[str, Policy] = {}
        self._attached: set[tuple[Principal, str]] = set()  # (principal, policy id)
        self._server_keys: dict[str, str] = {}
        self._revoked: dict[str, int] = {}  # login token id -> its expiry
        self._clock = clock

    def create_user(self, user: User) -> None:
        with self._lock:
            if user.id in self._users:
                raise auth_errors.UserExists(user.id)
            self._users[user.id] = user

    def get_user(self, user_id: str) -> User:
        try:
            return self._users[user_id]
        except KeyError:
            raise auth_errors.UserNotFound(user_id) from None

    def list_users(self, after: str = "", limit: int = 1000) -> list[User]:
        return _page(self._users, after, limit)  # type: ignore[arg-type]

    def delete_user(self, user_id: str) -> None:
        with self._lock:
            if self._users.pop(user_id, None) is None:
                raise auth_errors.UserNotFound(user_id)

    def create_credential(self, credential: Credential) -> None:
        with self._lock:
            if credential.access_key_id in self._credentials:
                raise errors.AlreadyExists(credential.access_key_id)
            self._credentials[credential.access_key_id] = credential

    def get_credential(self, access_key_id: str) -> Credential:
        try:
            return self._credentials[access_key_id]
        except KeyError:
            raise auth_errors.CredentialNotFound(access_key_id) from None

    def list_credentials(self, user_id: str) -> list[Credential]:
        return sorted((c for c in self._credentials.values() if c.user_id == user_id), key=lambda c: c.access_key_id)

    def delete_credential(self, access_key_id: str) -> None:
        with self._lock:
            if self._credentials.pop(access_key_id, None) is None:
                raise auth_errors.CredentialNotFound(access_key_id)

    def create_group(self, group: Group) -> None:
        with self._lock:
            if group.id in self._groups:
                raise GroupExists(group.id)
            self._groups[group.id] = group

    def get_group(self, group_id: str) -> Group:
        try:
            return self._groups[group_id]
        except KeyError:
            raise GroupNotFound(group_id) from None

    def list_groups(self, after: str = "", limit: int = 1000) -> list[Group]:
        return _page(self._groups, after, limit)  # type: ignore[arg-type]

    def delete_group(self, group_id: str) -> None:
        with self._lock:
            if self._groups.pop(group_id, None) is None:
                raise GroupNotFound(group_id)

    def add_group_member(self, group_id: str, user_id: str) -> None:
        with self._lock:
            self._members.add((group_id, user_id))

    def remove_group_member(self, group_id: str, user_id: str) -> None:
        with self._lock:
            self._members.discard((group_id, user_id))

    def list_group_members(self, group_id: str) -> list[str]:
        return sorted(user for group, user in set(self._members) if group == group_id)

    def list_user_groups(self, user_id: str) -> list[str]:
        return sorted(group for group, user in set(self._members) if user == user_id)

    def create_policy(self, policy: Policy) -> None:
        with self._lock:
            if policy.id in self._policies:
                raise PolicyExists(policy.id)
            self._policies[policy.id] = policy

    def update_policy(self, policy: Policy) -> None:
        with self._lock:
            if policy.id not in self._policies:
                raise PolicyNotFound(policy.id)
            self._policies[policy.id] = policy

    def get_policy(self, policy_id: str) -> Policy:
        try:
            return self._policies[policy_id]
        except KeyError:
            raise PolicyNotFound(policy_id) from None

    def get_policies(self, policy_ids: list[str]) -> list[Policy]:
        return [self._policies[p] for p in sorted(set(policy_ids)) if p in self._policies]

    def list_policies(self, after: str = "", limit: int = 1000) -> list[Policy]:
        return _page(self._policies, after, limit)  # type: ignore[arg-type]

    def delete_policy(self, policy_id: str) -> None:
        with self._lock:
            if self._policies.pop(policy_id, None) is None:
                raise PolicyNotFound(policy_id)

    def attach_policy(self, principal: Principal, policy_id: str) -> None:
        with self._lock:
            self._attached.add((principal, policy_id))

    def detach_policy(self, principal: Principal, policy_id: str) -> None:
        with self._lock:
            self._attached.discard((principal, policy_id))

    def list_attached_policies(self, principal: Principal) -> list[str]:
        return sorted(policy for who, policy in set(self._attached) if who == principal)

    def list_policy_principals(self, policy_id: str) -> list[Principal]:
        return sorted((who for who, policy in set(self._attached) if policy == policy_id), key=lambda p: (p.kind, p.id))

    def create_server_key(self, name: str, sealed: str) -> None:
        with self._lock:
            if name in self._server_keys:
                raise errors.AlreadyExists(f"server key {name}")
            self._server_keys[name] = sealed

    def get_server_key(self, name: str) -> str:
        try:
            return self._server_keys[name]
        except KeyError:
            raise errors.NotFound(f"server key {name}") from None

    def revoke_token(self, token_id: str, expires: int) -> None:
        with self._lock:
            # Expired revocations go as DynamoDB's TTL drops them, so the twin stays as small as the table.
            now = self._clock()
            self._revoked = {t: e for t, e in self._revoked.items() if e > now}
            self._revoked[token_id] = max(expires, self._revoked.get(token_id, expires))

    def is_token_revoked(self, token_id: str) -> bool:
        return token_id in self._revoked


class MemoryCipher:
    """SecretCipher twin from the standard library: an HMAC-SHA256 keystream (encrypt-then-MAC), with the tag
    over nonce, ciphertext and context, so tampering or another context fails like KMS does."""

    _NONCE = 16
    _TAG = 32

    def __init__(self, key: bytes | None = None) -> None:
        master = key if key is not None else secrets.token_bytes(32)
        self._stream_key = hmac.digest(master, b"stream", "sha256")
        self._mac_key = hmac.digest(master, b"mac", "sha256")

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        if not plaintext:
            raise errors.Invalid("nothing to encrypt")  # as KMS, which takes 1 to 4096 bytes
        nonce = secrets.token_bytes(self._NONCE)
        body = self._xor(nonce, plaintext)
        return nonce + body + self._tag(nonce, body, context)

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        if len(ciphertext) < self._NONCE + self._TAG:
            raise DecryptionFailed("ciphertext too short")
        nonce, body, tag = ciphertext[: self._NONCE], ciphertext[self._NONCE : -self._TAG], ciphertext[-self._TAG :]
        if not hmac.compare_digest(tag, self._tag(nonce, body, context)):
            raise DecryptionFailed("ciphertext does not verify")
        return self._xor(nonce, body)

    def _xor(self, nonce: bytes, data: bytes) -> bytes:
        stream = b"".join(
            hmac.digest(self._stream_key, nonce + n.to_bytes(8, "big"), "sha256") for n in range(len(data) // 32 + 1)
        )
        return bytes(a ^ b for a, b in zip(data, stream, strict=False))  # the stream is at least as long

    def _tag(self, nonce: bytes, body: bytes, context: Mapping[str, str]) -> bytes:
        aad = json.dumps(sorted(context.items())).encode()
        return hmac.digest(self._mac_key, nonce + len(body).to_bytes(8, "big") + body + aad, "sha256")


class MemoryRepositoryMetadataStore:
    """Repository metadata, keyed by (repository id, creation date) like the DynamoDB store's condition."""

    def __init__(self, refs: MemoryRefStore) -> None:
        self._refs = refs
        self._lock = threading.Lock()
        self._metadata: dict[tuple[str, int], dict[str, str]] = {}

    def get(self, repo_id: str, creation_date: int) -> dict[str, str]:
        self._check(repo_id, creation_date)
        return dict(self._metadata.get((repo_id, creation_date), {}))

    def set(self, repo_id: str, creation_date: int, values: Mapping[str, str]) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            self._metadata.setdefault((repo_id, creation_date), {}).update(values)

    def delete(self, repo_id: str, creation_date: int, keys: Sequence[str]) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            current = self._metadata.get((repo_id, creation_date), {})
            for key in keys:
                current.pop(key, None)

    def _check(self, repo_id: str, creation_date: int) -> None:
        if self._refs.get_repository(RepositoryID(repo_id)).creation_date != creation_date:
            raise errors.RepositoryNotFound(repo_id)


class MemoryBranchProtectionStore:
    """Branch protection rules, keyed by (repository id, creation date) like the DynamoDB store's condition."""

    def __init__(self, refs: MemoryRefStore) -> None:
        self._refs = refs
        self._lock = threading.Lock()
        self._rules: dict[tuple[str, int], ProtectionRules] = {}

    def get(self, repo_id: str, creation_date: int) -> ProtectionRules:
        self._check(repo_id, creation_date)
        with self._lock:
            return self._rules.get((repo_id, creation_date), ProtectionRules((), ""))

    def set(self, repo_id: str, creation_date: int, rules: ProtectionRules, expected_etag: str | None) -> None:
        self._check(repo_id, creation_date)
        with self._lock:
            current = self._rules.get((repo_id, creation_date), ProtectionRules((), ""))
            if expected_etag is not None and current.etag != expected_etag:
                raise errors.PreconditionFailed("branch protection rules changed since the given ETag")
            self._rules[(repo_id, creation_date)] = rules

    def _check(self, repo_id: str, creation_date: int) -> None:
        if self._refs.get_repository(RepositoryID(repo_id)).creation_date != creation_date:
            raise errors.RepositoryNotFound(repo_id)


class MemoryWorkflowRunner:
    """The WorkflowRunner twin. With ``execute`` (the workflow as a function of its payload) an execution runs
    when it starts, in the caller's thread, and ends SUCCEEDED with its answer, or FAILED with the error's class
    name and a cause shaped as a Lambda's; without it, executions stay RUNNING until ``end`` is called."""

    def __init__(
        self,
        execute: Callable[[dict[str, object]], dict[str, object]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._execute = execute
        self._clock = clock
        self._lock = threading.Lock()
        self._executions: dict[str, Execution] = {}

    def start(self, name: str, payload: dict[str, object]) -> None:
        started_with = json.loads(json.dumps(payload))
        with self._lock:
            found = self._executions.get(name)
            if found is not None:
                if found.status == "RUNNING" and found.input == started_with:
                    return
                raise errors.AlreadyExists(f"workflow execution {name} already exists")
            self._executions[name] = Execution("RUNNING", self._clock(), input=started_with)
        if self._execute is None:
            return
        try:
            output = self._execute(json.loads(json.dumps(payload)))
        except Exception as e:  # noqa: BLE001 - as Lambda does, any exception of a task is the execution's failure
            cause = json.dumps({"errorType": type(e).__name__, "errorMessage": str(e)})
            self.end(name, "FAILED", error=type(e).__name__, cause=cause)
        else:
            self.end(name, "SUCCEEDED", output=output)

    def describe(self, name: str) -> Execution | None:
        with self._lock:
            return self._executions.get(name)

    def end(
        self, name: str, status: str, output: dict[str, object] | None = None, error: str = "", cause: str = ""
    ) -> None:
        """Ends a running execution (what the state machine does when its last state ends)."""
        with self._lock:
            found = self._executions[name]
            self._executions[name] = dataclasses.replace(
                found,
                status=status,
                updated=self._clock(),
                output=json.loads(json.dumps(output)) if output is not None else None,
                error=error,
                cause=cause,
            )


class MemoryJobStarter:
    """The JobStarter twin: records every run it starts. ``refuse``: a missing application, every start raises
    StorageError. The same idempotency token starts one run only and answers its id again."""

    def __init__(self, refuse: bool = False) -> None:
        self._refuse = refuse
        self._lock = threading.Lock()
        self.runs: dict[str, JobRunRequest] = {}
        self._by_token: dict[str, str] = {}

    def start(self, request: JobRunRequest) -> str:
        if self._refuse:
            raise errors.StorageError("job run refused: no such application")
        with self._lock:
            if request.idempotency_token and request.idempotency_token in self._by_token:
                return self._by_token[request.idempotency_token]
            run_id = secrets.token_hex(8)
            self.runs[run_id] = request
            if request.idempotency_token:
                self._by_token[request.idempotency_token] = run_id
            return run_id
