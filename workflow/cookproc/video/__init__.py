"""The visual branch: video frames, ResNet-50 frame features, TSM action recognition on EPIC-Kitchens
classes, alignment of 5-second segments to clips, and visual / fused procedure tuples.

Modules: ``epic`` (class lists and their words), ``frames`` (decoding and frame sampling),
``imaging`` (resize, crop, ImageNet normalisation), ``resnet`` (frame features), ``tsm`` (the TSM
model and its EPIC-format checkpoints), ``segments`` (the TSM_SEGMENTS table, own and imported),
``align`` (segments to clips), ``tuples`` (visual-only tuples and fusion, paper and corrected).
"""
