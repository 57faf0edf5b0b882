"""BoxWorld and bridge BoxWorld (Section 4 of the paper) as gymnasium environments."""
