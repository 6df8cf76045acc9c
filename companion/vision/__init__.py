"""Vision: from camera frames to a checked ``TableLayout``. Imports OpenCV and numpy, never Qt."""
