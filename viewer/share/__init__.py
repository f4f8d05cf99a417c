"""A session as one self-contained HTML file: styles, script and data inside, no network, secrets masked."""
