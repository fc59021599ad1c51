"""Type stubs of the extension module (python/src/)."""

from os import PathLike
from typing import Any, Iterable, Iterator, Literal, Mapping, Optional, Sequence, Union, overload

Entry = dict[str, Any]
Text = Union[str, bytes, bytearray]
VariantArg = Union[int, Literal["random"]]
Part = Union[tuple[str, float], Mapping[str, Any]]

__version__: str

class Dataset:
    name: str
    seed: int
    size: int
    level: int
    variant: VariantArg
    families: list[str]
    parts: list[dict[str, Any]]
    config: dict[str, Any]
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, idx: int) -> Entry: ...
    @overload
    def __getitem__(self, idx: slice) -> list[Entry]: ...
    def __iter__(self) -> Iterator[Entry]: ...
    def score_answer(self, answer: Optional[Text], entry: Entry) -> float: ...

def create_dataset(
    name: str,
    seed: Optional[int] = 0,
    size: int = 500,
    level: int = 1,
    variant: Optional[VariantArg] = 0,
    *,
    source_keys: bool = False,
) -> Dataset: ...
def create_composite(
    parts: Union[Mapping[str, float], Iterable[Part]],
    seed: Optional[int] = 0,
    size: int = 500,
    level: int = 1,
    variant: Optional[VariantArg] = 0,
    *,
    source_keys: bool = False,
) -> Dataset: ...
def score(entry: Entry, response: Optional[Text], *, lenient: bool = False) -> float: ...
def score_details(entry: Entry, response: Optional[Text], *, lenient: bool = False) -> dict[str, Any]: ...
def score_many(
    entries: Sequence[Entry],
    responses: Sequence[Optional[Text]],
    *,
    mode: Literal["strict", "lenient", "bare"] = "strict",
) -> list[float]: ...
def score_answer(answer: Optional[Text], entry: Entry) -> float: ...
def extract_answer(response: Text) -> Optional[str]: ...
def dumps(entry: Entry) -> str: ...
def list_families() -> list[dict[str, Any]]: ...
def splits() -> list[dict[str, Any]]: ...
def split(name: str) -> dict[str, Any]: ...
def read_run(dir: Union[str, PathLike[str]]) -> dict[str, Any]: ...
