"""One module per S3 operation. Each takes the request's Context and returns a Response (or raises)."""

__all__ = [
    "abort_multipart_upload",
    "bucket_location",
    "complete_multipart_upload",
    "copy_object",
    "create_multipart_upload",
    "delete_object",
    "delete_objects",
    "get_object",
    "head_bucket",
    "list_buckets",
    "list_multipart_uploads",
    "list_objects",
    "list_parts",
    "put_object",
    "upload_part",
    "upload_part_copy",
]
