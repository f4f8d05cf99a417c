"""Core values every layer shares: JSON read exactly, masking, problems, sorted position lists, the seed's rules."""
