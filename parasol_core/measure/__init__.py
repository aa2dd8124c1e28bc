"""Measuring a machine to make its model (`parasol-model measure`)."""
