"""The task agent: request -> plan -> simulation -> approval -> dispatch <-> check -> report."""
