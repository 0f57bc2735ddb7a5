"""Sessions read back as validated ATIF trajectories: mappers, settling, cost, HTTP routes."""
