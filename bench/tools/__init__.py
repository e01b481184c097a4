"""Tools that regenerate data the app ships (run by hand, never at run time)."""
