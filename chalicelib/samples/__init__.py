"""The sample dataset a repository created with ``sample_data: true`` starts with (lakeFS's include_samples).

lakeFS fills such a repository with its quickstart dataset and commits it as "Add sample data". Lakelet's
dataset is its own, generated here with deterministic bytes in the layout of lakeFS's (dataset.py): a Parquet
table (table.py), a quickstart README and a note on the data's source (documents.py), and 29 pictures
(pictures.py, through the png.py and gif.py writers). Nothing is generated until someone asks for it (pyarrow is
only imported then), so the API's cold start does not pay for it; generating takes a few seconds, once per
process.

``sample_objects()`` is the one definition of the dataset; ``populate()`` writes it into a repository's branch
and commits it. The local stack's ``quickstart`` repository is created through the API with sample_data, so it
holds exactly these objects.
"""

from __future__ import annotations

from .dataset import SAMPLE_COMMIT_MESSAGE, SampleObject, sample_objects
from .populate import populate

__all__ = ["SAMPLE_COMMIT_MESSAGE", "SampleObject", "populate", "sample_objects"]
