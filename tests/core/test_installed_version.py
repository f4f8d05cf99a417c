"""The version of genai-prices, which every start needs (kept sums say what priced them): read from the metadata
folder beside its package, as importlib.metadata gives it, and asked of importlib.metadata when none is there."""

from __future__ import annotations

from importlib.metadata import version

from viewer.core import genai_rates


def _package(folder, name: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("")


def _metadata(folder, distribution: str, number: str) -> None:
    place = folder / f"{distribution.replace('-', '_')}-{number}.dist-info"
    place.mkdir(parents=True)
    (place / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {number}\n\nVersion: 9\n")


def test_genai_prices_is_named_at_its_installed_version():
    assert genai_rates.SOURCE == f"genai-prices {version('genai-prices')}"
    assert genai_rates._installed_version("genai-prices", "genai_prices") == version("genai-prices")


def test_the_version_beside_a_package_is_the_one_importlib_metadata_reads(tmp_path, monkeypatch):
    _package(tmp_path, "beside_pkg")
    _metadata(tmp_path, "beside-pkg", "1.2.3")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert genai_rates._installed_version("beside-pkg", "beside_pkg") == "1.2.3" == version("beside-pkg")


def test_a_package_with_no_metadata_beside_it_is_asked_of_importlib_metadata(tmp_path, monkeypatch):
    _package(tmp_path / "code", "apart_pkg")
    _metadata(tmp_path / "meta", "apart-pkg", "4.5")
    monkeypatch.syspath_prepend(str(tmp_path / "meta"))
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    assert genai_rates._installed_version("apart-pkg", "apart_pkg") == "4.5"
