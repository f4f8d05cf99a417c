"""Sessions kept between runs: authenticated cache entries a restart reads instead of the files."""
