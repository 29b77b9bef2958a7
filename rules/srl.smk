# Stage rules: srl (see CONTRIBUTING.md).
