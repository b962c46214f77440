//! `@wp.struct` support: the C++ definitions warp emits for each struct a
//! module uses, and the lowering of struct values (constructors, field reads
//! and writes) and of the other composite constructors and components
//! (vector, matrix, quaternion and transform constructors, `t.p` / `t.q`).

use super::*;
use crate::lower::types::{
    ArrayKind, CompositeConst, CompositeId, Query, StructDef, StructId, Value,
};

/// warp's `codegen_struct` (without the tile helpers): the struct, its
/// constructors, `+=`, adjoint constructor, `add` and `adj_atomic_add`.
pub fn struct_source(def: &StructDef, tile_helpers: bool) -> String {
    let name = def.native.as_str();
    let ind = "    ";
    let mut body = String::new();
    if def.fields.is_empty() {
        body.put_all(&[ind, "char _dummy_;\n"]);
    }
    let mut forward_args = Vec::new();
    let mut reverse_args = Vec::new();
    let mut initializers = String::new();
    let mut prefix_add = String::new();
    let mut prefix_sub = String::new();
    let mut prefix_neg = String::new();
    let mut reverse_body = String::new();
    let mut atomic_add = String::new();
    // What tile code needs of a struct element, field by field (warp's
    // `include_tile_helpers`): an atomic add returning the old value, and
    // warp shuffles.
    let mut atomic_add_forward = String::new();
    let mut shuffle_down = String::new();
    let mut shuffle_xor = String::new();
    for (label, ty) in &def.fields {
        let ctype = ty.ctype(false);
        body.put_all(&[ind, &ctype, " ", label, ";\n"]);
        let default = if forward_args.is_empty() { "" } else { " = {}" };
        forward_args.push(format!("{ctype} const& {label}{default}"));
        reverse_args.push(format!("{ctype} const&"));
        let namespace = if ctype.starts_with("wp::") || ctype == "bool" {
            "wp::"
        } else {
            ""
        };
        atomic_add.put(&format!(
            "{ind}{namespace}adj_atomic_add(&p->{label}, t.{label});\n"
        ));
        let descriptor = matches!(
            ty,
            Type::Array {
                kind: ArrayKind::Array
                    | ArrayKind::Indexed
                    | ArrayKind::Fabric
                    | ArrayKind::IndexedFabric,
                ..
            }
        );
        if descriptor {
            atomic_add_forward.put(&format!("{ind}old.{label} = p->{label};\n"));
            shuffle_down.put(&format!(
                "{ind}ret.{label} = wp::warp_shuffle_down(val.{label}, offset, mask);\n"
            ));
            shuffle_xor.put(&format!(
                "{ind}ret.{label} = wp::warp_shuffle_xor(val.{label}, lane_mask);\n"
            ));
        } else if matches!(ty, Type::Struct(_))
            || ty.value().is_some_and(|v| !matches!(v, Value::Texture(_)))
        {
            if accumulates(ty) {
                atomic_add_forward.put(&format!(
                    "{ind}old.{label} = {namespace}atomic_add(&p->{label}, t.{label});\n"
                ));
            } else {
                atomic_add_forward.put(&format!("{ind}old.{label} = p->{label};\n"));
            }
            let ns = if matches!(ty, Type::Struct(_)) {
                ""
            } else {
                "wp::"
            };
            shuffle_down.put(&format!(
                "{ind}ret.{label} = {ns}warp_shuffle_down(val.{label}, offset, mask);\n"
            ));
            shuffle_xor.put(&format!(
                "{ind}ret.{label} = {ns}warp_shuffle_xor(val.{label}, lane_mask);\n"
            ));
        } else {
            atomic_add_forward.put(&format!("{ind}old.{label} = p->{label};\n"));
            shuffle_down.put(&format!("{ind}ret.{label} = val.{label};\n"));
            shuffle_xor.put(&format!("{ind}ret.{label} = val.{label};\n"));
        }
        let prefix = if initializers.is_empty() {
            ":".to_string()
        } else {
            format!("{ind},")
        };
        initializers.put(&format!("{ind}{prefix} {label}{{{label}}}\n"));
    }
    for (label, ty) in &def.fields {
        if accumulates(ty) {
            prefix_add.put(&format!("{ind}{label} += rhs.{label};\n"));
            prefix_sub.put(&format!("{ind}{label} -= rhs.{label};\n"));
            prefix_neg.put(&format!("{ind}ret.{label} = -ret.{label};\n"));
        }
    }
    for (label, ty) in &def.fields {
        reverse_args.push(format!("{} & adj_{label}", ty.ctype(false)));
        if matches!(ty, Type::Array { .. }) {
            reverse_body.put(&format!("{ind}adj_{label} = adj_ret.{label};\n"));
        } else {
            reverse_body.put(&format!("{ind}adj_{label} += adj_ret.{label};\n"));
        }
    }
    reverse_args.push(format!("{name} & adj_ret"));
    let defaulted = if forward_args.is_empty() {
        String::new()
    } else {
        format!("{name}() = default;")
    };
    let (member_ops, add_body, helpers) = if tile_helpers {
        (
            format!(
                "\n\n    CUDA_CALLABLE {name}& operator -= (const {name}& rhs)\n    {{{prefix_sub}\n        return *this;}}\n\n    CUDA_CALLABLE {name} operator - () const\n    {{\n        {name} ret = *this;\n{prefix_neg}\n        return ret;\n    }}\n"
            ),
            format!("    {name} ret = a;\n    ret += b;\n    return ret;"),
            format!(
                "\n// Required by tile templates. The overloads are found by ADL when tile.h is\n// instantiated with a generated struct type.\nCUDA_CALLABLE void adj_add(const {name}& a, const {name}& b, {name}& adj_a, {name}& adj_b, const {name}& adj_ret)\n{{\n    adj_a += adj_ret;\n    adj_b += adj_ret;\n}}\n\nCUDA_CALLABLE {name} sub(const {name}& a, const {name}& b)\n{{\n    {name} ret = a;\n    ret -= b;\n    return ret;\n}}\n\nCUDA_CALLABLE void adj_sub(const {name}& a, const {name}& b, {name}& adj_a, {name}& adj_b, const {name}& adj_ret)\n{{\n    adj_a += adj_ret;\n    adj_b -= adj_ret;\n}}\n\nCUDA_CALLABLE {name} atomic_add({name}* p, {name} t)\n{{\n    {name} old {{}};\n{atomic_add_forward}\n    return old;\n}}\n\nCUDA_CALLABLE {name} tile_atomic_add_value({name}* p, {name} t)\n{{\n    return atomic_add(p, t);\n}}\n\nCUDA_CALLABLE {name} tile_adj_atomic_add_value({name}* p, {name} t)\n{{\n    // Tile adjoint struct atomics accumulate only for side effects; callers\n    // currently ignore the returned old value, so avoid a second atomic here.\n    {name} old {{}};\n    adj_atomic_add(p, t);\n    return old;\n}}\n\n#if defined(__CUDA_ARCH__)\nCUDA_CALLABLE {name} warp_shuffle_down({name} val, int offset, int mask)\n{{\n    {name} ret {{}};\n{shuffle_down}\n    return ret;\n}}\n\nCUDA_CALLABLE {name} warp_shuffle_xor({name} val, int lane_mask)\n{{\n    {name} ret {{}};\n{shuffle_xor}\n    return ret;\n}}\n#endif\n"
            ),
        )
    } else {
        (
            String::new(),
            format!("    return {name}();"),
            String::new(),
        )
    };
    format!(
        "\nstruct {name}\n{{\n{body}\n\n    {defaulted}\n    CUDA_CALLABLE {name}({})\n    {initializers}\n    {{\n    }}\n\n    CUDA_CALLABLE {name}& operator += (const {name}& rhs)\n    {{{prefix_add}\n        return *this;}}\n{member_ops}\n}};\n\nstatic CUDA_CALLABLE void adj_{name}({})\n{{\n{reverse_body}}}\n\n// Required when compiling adjoints.\nCUDA_CALLABLE {name} add(const {name}& a, const {name}& b)\n{{\n{add_body}\n}}\n\nCUDA_CALLABLE void adj_atomic_add({name}* p, {name} t)\n{{\n{atomic_add}}}\n\n{helpers}\n\n",
        forward_args.join(",\n    "),
        reverse_args.join(",\n    "),
    )
}

/// warp's `field_type_accumulates`: nested structs, and values of the atomic-add scalar types.
fn accumulates(ty: &Type) -> bool {
    match ty {
        Type::Struct(_) => true,
        Type::Array { .. } => false,
        t => t.value().is_some_and(|v| {
            matches!(
                v.dtype(),
                Scalar::Int32
                    | Scalar::Int64
                    | Scalar::UInt32
                    | Scalar::UInt64
                    | Scalar::Float32
                    | Scalar::Float64
                    | Scalar::Float16
                    | Scalar::BFloat16
            )
        }),
    }
}

/// warp's `is_differentiable_value_type`: float components, or a struct.
fn differentiable_value(ty: &Type) -> bool {
    match ty.strip_ref() {
        Type::Struct(_) => true,
        Type::Array { .. } => false,
        t => t.value().is_some_and(|v| v.dtype().is_float()),
    }
}

/// The structs `id` depends on, then `id` (warp's `build_struct_recursive` order).
pub(super) fn struct_build_order(id: StructId) -> Vec<StructId> {
    let mut stack = vec![id];
    let mut seen = Vec::new();
    while let Some(s) = stack.pop() {
        seen.push(s);
        for (_, ty) in &s.def().fields {
            match ty {
                Type::Struct(c)
                | Type::Array {
                    dtype: Value::Struct(c),
                    ..
                } => stack.push(*c),
                _ => {}
            }
        }
    }
    seen.reverse();
    seen
}

impl<'a> Adjoint<'a> {
    /// Records that the module needs `id` (and the structs it holds) defined.
    pub(super) fn use_struct(&mut self, id: StructId) {
        let mut funcs = self.funcs.borrow_mut();
        for s in struct_build_order(id) {
            if !funcs.structs.contains(&s) {
                funcs.structs.push(s);
            }
        }
    }

    /// The structs of the arguments, registered after the body as warp does.
    pub(super) fn use_argument_structs(&mut self) {
        for i in 0..self.args.len() {
            match *self.ty(self.args[i]) {
                Type::Struct(id)
                | Type::Array {
                    dtype: Value::Struct(id),
                    ..
                } => self.use_struct(id),
                _ => {}
            }
        }
    }

    /// Reads `agg.attr`: a struct field (a reference to it), a transform's
    /// `p` / `q`, or a vector or quaternion component.
    pub(super) fn attribute_read(&mut self, agg: VarId, attr: &str) -> LResult<VarId> {
        let agg_ty = self.ty(agg).strip_ref();
        match agg_ty {
            Type::Struct(_)
            | Type::Query(
                Query::MeshPoint | Query::MeshRay | Query::Texture(_) | Query::MeshObject,
            ) => {
                // The result structs of mesh queries, textures and meshes read like `@wp.struct`s.
                // The field's name as stored in the definition (an origin step keeps it).
                let field: Option<(&'static str, Type)> = match agg_ty {
                    Type::Struct(id) => {
                        let def = id.def();
                        def.field(attr).map(|(i, t)| (def.fields[i].0.as_str(), t))
                    }
                    Type::Query(q) => q.field(attr),
                    _ => None,
                };
                let Some((label, field)) = field else {
                    let name = match agg_ty {
                        Type::Struct(id) => id.def().key.clone(),
                        t => t.to_string(),
                    };
                    return Err(self.err(format!("'{name}' has no attribute '{attr}'")));
                };
                let ref_ty = match field {
                    Type::Array { dtype, ndim, kind } => Type::ArrayRef { dtype, ndim, kind },
                    t => match t.value() {
                        Some(v) => Type::Ref(v),
                        None => return Err(self.err("unsupported struct field type")),
                    },
                };
                let out = self.add_var(ref_ty, None);
                let origin = if matches!(self.ty(agg), Type::Array { .. }) {
                    None
                } else {
                    self.origin_of(agg)
                };
                match origin {
                    Some(o) => {
                        let o = o.extend(Step::Field(label));
                        let ptr = self.origin_pointer(&o, false, None);
                        forward!(self, "{} = {ptr};", self.emit(out));
                        self.set_origin(out, o);
                    }
                    None if self.ty(agg).is_ref() => {
                        forward!(self, "{} = &({}->{attr});", self.emit(out), self.emit(agg))
                    }
                    None => forward!(self, "{} = &({}.{attr});", self.emit(out), self.emit(agg)),
                }
                let op = if differentiable_value(&field) {
                    "+="
                } else {
                    "="
                };
                reverse!(
                    self,
                    "{}.{attr} {op} {};",
                    self.var(agg).adj(),
                    self.var(out).adj()
                );
                self.note_field_origin(agg, attr, out);
                Ok(out)
            }
            Type::Array { kind, dtype, .. }
                if attr == "ptr" && matches!(kind, ArrayKind::Array | ArrayKind::Fixed(_)) =>
            {
                // The data pointer, seen as a uint64.
                let out = self.add_var(Type::Ref(Value::Scalar(Scalar::UInt64)), None);
                let op = if self.ty(agg).is_ref() { "->" } else { "." };
                forward!(
                    self,
                    "{} = (wp::uint64*)&({}{op}data);",
                    self.emit(out),
                    self.emit(agg)
                );
                reverse!(
                    self,
                    "{}.data = ({}*){};",
                    self.var(agg).adj(),
                    dtype.ctype(),
                    self.var(out).adj()
                );
                Ok(out)
            }
            Type::Array { kind, .. }
                if attr == "size"
                    && matches!(kind, ArrayKind::Fabric | ArrayKind::IndexedFabric) =>
            {
                let out = self.add_var(Type::Ref(Value::Scalar(Scalar::UInt64)), None);
                let op = if self.ty(agg).is_ref() { "->" } else { "." };
                forward!(self, "{} = &({}{op}size);", self.emit(out), self.emit(agg));
                reverse!(
                    self,
                    "{}.size = {};",
                    self.var(agg).adj(),
                    self.var(out).adj()
                );
                Ok(out)
            }
            Type::Array { kind, .. }
                if attr == "shape"
                    && !matches!(kind, ArrayKind::Fabric | ArrayKind::IndexedFabric) =>
            {
                let out = self.add_var(Type::Shape(true), None);
                let op = if self.ty(agg).is_ref() { "->" } else { "." };
                forward!(self, "{} = &({}{op}shape);", self.emit(out), self.emit(agg));
                reverse!(
                    self,
                    "{}.shape = {};",
                    self.var(agg).adj(),
                    self.var(out).adj()
                );
                Ok(out)
            }
            Type::Transform(_) => {
                let (name, component) = match attr {
                    "p" => ("transform_get_translation", "p"),
                    "q" => ("transform_get_rotation", "q"),
                    _ => return Err(self.err(format!("'transform' has no attribute '{attr}'"))),
                };
                let out = self.add_value_call(name, &[agg])?;
                self.note_origin_step(agg, out, Step::Field(component));
                Ok(out)
            }
            _ => {
                let idx = self.component_index(agg, attr)?;
                let out = self.add_value_call("extract", &[agg, idx])?;
                self.note_origin_step(agg, out, Step::Index(std::iter::once(idx).collect()));
                Ok(out)
            }
        }
    }

    /// `base.attr = rhs` where `base` is a chain of struct fields rooted at a
    /// local struct value (warp's flat member lvalue): written in place.
    /// False when `base` is something else.
    pub(super) fn local_struct_store(
        &mut self,
        base: &Expr<'a>,
        attr: &str,
        rhs: VarId,
    ) -> LResult<bool> {
        let Some((root, path, Type::Struct(id))) = self.struct_member_path(base) else {
            return Ok(false);
        };
        let def = id.def();
        let Some((_, field)) = def.field(attr) else {
            return Err(self.err(format!("'{}' has no attribute '{attr}'", def.key)));
        };
        let got = self.ty(rhs).strip_ref();
        if got != field {
            return Err(self.err(format!(
                "assigning to struct field `{attr}` ({field}) with different type ({got})"
            )));
        }
        forward!(
            self,
            "{}{path}.{attr} = {};",
            self.emit(root),
            self.emit(rhs)
        );
        reverse!(self, "{}{path}.{attr} = {{}};", self.var(root).adj());
        if differentiable_value(&field) {
            reverse!(
                self,
                "{} += {}{path}.{attr};",
                self.var(rhs).adj(),
                self.var(root).adj()
            );
        }
        Ok(true)
    }

    /// `agg.attr = rhs` for a transform `agg` (its `p` / `q`); struct values
    /// other than local ones are refused.
    pub(super) fn store_composite_attribute(
        &mut self,
        agg: VarId,
        attr: &str,
        rhs: VarId,
    ) -> LResult<()> {
        match *self.ty(agg) {
            Type::Transform(_) => {
                let name = match attr {
                    "p" => "transform_set_translation",
                    "q" => "transform_set_rotation",
                    _ => return Err(self.err(format!("'transform' has no attribute '{attr}'"))),
                };
                self.add_call(name, &[agg, rhs])?;
                Ok(())
            }
            Type::Ref(Value::Transform(_)) => Err(self.err(format!(
                "Error, assigning transform attribute {attr} to an array element"
            ))),
            // A field of a struct held by reference: through the field's address.
            Type::Ref(Value::Struct(_)) => {
                let field = self.attribute_read(agg, attr)?;
                if self.ty(field).is_ref() {
                    self.store_through(field, rhs)
                } else {
                    self.add_call("assign", &[field, rhs]).map(|_| ())
                }
            }
            _ => Err(self.err(
                "assigning to a field of a struct held by reference (an array element or argument) is not supported by this version of the lowering",
            )),
        }
    }

    /// `x.a.b op= v` for a field of a local struct value: read, operate, write back.
    pub(super) fn struct_field_aug_assign(
        &mut self,
        base: &Expr<'a>,
        attr: &str,
        op: BinOp,
        value: &Expr<'a>,
    ) -> LResult<bool> {
        let Some((root, path, Type::Struct(id))) = self.struct_member_path(base) else {
            return Ok(false);
        };
        let current = if path.is_empty() {
            self.attribute_read(root, attr)?
        } else {
            // warp reads through the flat member (`&(var_0.inner.value)`), not a reference chain.
            let def = id.def();
            let Some((_, field)) = def.field(attr) else {
                return Err(self.err(format!("'{}' has no attribute '{attr}'", def.key)));
            };
            let ref_ty = match field {
                Type::Array { dtype, ndim, kind } => Type::ArrayRef { dtype, ndim, kind },
                t => match t.value() {
                    Some(v) => Type::Ref(v),
                    None => return Err(self.err("unsupported struct field type")),
                },
            };
            let out = self.add_var(ref_ty, None);
            forward!(
                self,
                "{} = &({}{path}.{attr});",
                self.emit(out),
                self.emit(root)
            );
            let op = if differentiable_value(&field) {
                "+="
            } else {
                "="
            };
            reverse!(
                self,
                "{}{path}.{attr} {op} {};",
                self.var(root).adj(),
                self.var(out).adj()
            );
            out
        };
        let rhs = self.expr(value)?;
        let result = self.add_value_call(binop_builtin(op), &[current, rhs])?;
        self.local_struct_store(base, attr, result)
    }

    /// `x.a.b` where `x` is a local struct value (not a reference): the root
    /// variable, the `.a.b` path and the type at its end.
    fn struct_member_path(&mut self, e: &Expr<'a>) -> Option<(VarId, String, Type)> {
        match &e.kind {
            ExprKind::Name(n) => {
                let v = self.symbol(n)?;
                matches!(self.ty(v), Type::Struct(_)).then(|| (v, String::new(), *self.ty(v)))
            }
            ExprKind::Attribute(inner, attr) => {
                let (root, mut path, ty) = self.struct_member_path(inner)?;
                let Type::Struct(id) = ty else {
                    return None;
                };
                let (_, field) = id.def().field(attr)?;
                path.put_all(&[".", attr]);
                Some((root, path, field))
            }
            _ => None,
        }
    }

    /// A call of a composite type: vector, matrix, quaternion, transform or struct.
    pub(super) fn construct(
        &mut self,
        target: Value,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        if let Value::Struct(id) = target {
            return self.construct_struct(id, args, kwargs);
        }
        let transform_kwargs = matches!(target, Value::Transform(_))
            && kwargs.iter().all(|k| matches!(k.arg, Some("p" | "q")));
        if !kwargs.is_empty() && !transform_kwargs {
            // `mat32d(c, shape=(3, 2))`: keywords repeating the type's own
            // arguments are evaluated after the positional ones and dropped.
            let vals = self.eval_args(args)?;
            for kw in kwargs {
                self.type_keyword(target, kw)?;
            }
            return self.construct_from(target, vals);
        }
        let mut vals = self.eval_args(args)?;
        // `wp.transform(p=..., q=...)`: the keywords take their places.
        let mut slots: [Option<VarId>; 2] = [None, None];
        for kw in kwargs {
            let v = self.call_arg(&kw.value)?;
            slots[usize::from(kw.arg == Some("q"))] = Some(v);
        }
        if !kwargs.is_empty() {
            for (i, v) in slots.into_iter().enumerate() {
                match v {
                    Some(v) if vals.len() == i => vals.push(v),
                    None => {}
                    _ => return Err(self.err("transform() got multiple values for p or q")),
                }
            }
        }
        self.construct_from(target, vals)
    }

    /// A keyword of a call of concrete type `target` that repeats one of the
    /// type's own arguments (`shape=`, `length=`, a warp `dtype=`), evaluated
    /// as warp does: allowed when its value is the type's, else warp's error.
    fn type_keyword(&mut self, target: Value, kw: &Keyword<'a>) -> LResult<()> {
        let agrees = match (kw.arg, target) {
            // A warp scalar type, not Python's `float` or `int` (a different
            // object to warp's comparison).
            (Some("dtype"), _) => self
                .scope
                .dtype_arg(&kw.value)
                .map(|(spelled, s)| spelled.starts_with("wp::") && s == target.dtype()),
            (Some("shape"), Value::Matrix(r, c, _)) => {
                let v = self.expr(&kw.value)?;
                Some(self.tuple_int_constants(v).as_deref() == Some(&[r as i128, c as i128]))
            }
            (Some("length"), Value::Vector(n, _)) => {
                let v = self.expr(&kw.value)?;
                Some(matches!(self.var(v).constant, Some(ConstVal::Int(k)) if k == n as i128))
            }
            _ => None,
        };
        match (agrees, kw.arg) {
            (Some(true), _) => Ok(()),
            (Some(false), Some(arg)) => {
                let native = match target {
                    Value::Vector(..) => "vec_t",
                    Value::Matrix(..) => "mat_t",
                    Value::Quat(_) => "quat_t",
                    _ => "transform_t",
                };
                Err(self.err(format!(
                    "Remove the extraneous `{arg}` parameter when calling the templated version of `wp.{native}()`"
                )))
            }
            _ => Err(self.err(format!(
                "keyword arguments to {target}() are not supported by this version of the lowering"
            ))),
        }
    }

    /// warp's generic constructors `vector`, `matrix`, `quaternion` and
    /// `transformation` (`wp.types.vector(a, dtype=wp.float16)`,
    /// `wp.types.matrix(1.0, 2.0, 3.0, 4.0, shape=(2, 2))`): the arguments are
    /// evaluated in order (a `length=` or `shape=` value becomes variables, a
    /// `dtype=` does not), and the type is inferred from them as warp's
    /// `value_func`s infer it.
    pub(super) fn construct_generic(
        &mut self,
        kind: &'static str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let mut vals = self.eval_args(args)?;
        let mut dtype: Option<Scalar> = None;
        let mut length: Option<u8> = None;
        let mut shape: Option<(u8, u8)> = None;
        let mut slots: [Option<VarId>; 2] = [None, None];
        for kw in kwargs {
            match (kind, kw.arg) {
                (_, Some("dtype")) => {
                    let Some((spelled, s)) = self.scope.dtype_arg(&kw.value) else {
                        return Err(self.err(format!("unsupported dtype= argument to {kind}()")));
                    };
                    // A Python `float` stays the type's parameter (`quat_t<float>`).
                    if matches!(kind, "quaternion" | "transformation")
                        && !spelled.starts_with("wp::")
                    {
                        return Err(self.err(format!(
                            "{kind}(dtype={spelled}) is not supported by this version of the lowering; use a warp scalar type"
                        )));
                    }
                    dtype = Some(s);
                }
                ("vector", Some("length")) => {
                    let v = self.expr(&kw.value)?;
                    length = match self.var(v).constant {
                        Some(ConstVal::Int(n)) if (1..=255).contains(&n) => Some(n as u8),
                        _ => return Err(self.err("vector(length=...) must be a constant integer")),
                    };
                }
                ("matrix", Some("shape")) => {
                    let v = self.expr(&kw.value)?;
                    let dims = self.tuple_int_constants(v);
                    shape = match dims.as_deref() {
                        Some(&[r, c]) if (1..=255).contains(&r) && (1..=255).contains(&c) => {
                            Some((r as u8, c as u8))
                        }
                        _ => {
                            return Err(self.err(
                                "matrix(shape=...) must be a tuple of two constant integers",
                            ));
                        }
                    };
                }
                ("transformation", Some(k @ ("p" | "q"))) => {
                    let v = self.call_arg(&kw.value)?;
                    slots[usize::from(k == "q")] = Some(v);
                }
                (_, k) => {
                    return Err(self.err(format!(
                        "unsupported keyword argument {} to {kind}()",
                        k.unwrap_or("**")
                    )));
                }
            }
        }
        for (i, v) in slots.into_iter().enumerate() {
            match v {
                Some(v) if vals.len() == i => vals.push(v),
                None => {}
                _ => return Err(self.err("transformation() got multiple values for p or q")),
            }
        }
        let types: Vec<Type> = vals.iter().map(|v| self.ty(*v).strip_ref()).collect();
        // warp's `scalar_infer_type`: the one scalar type of the arguments (or of their components).
        let common = || -> Option<Scalar> {
            let mut found: Option<Scalar> = None;
            for t in &types {
                let s = match t {
                    Type::Scalar(s) => *s,
                    t => t.value()?.dtype(),
                };
                if found.is_some_and(|f| f != s) {
                    return None;
                }
                found = Some(s);
            }
            found
        };
        let n = vals.len();
        let cannot =
            |what: &str| self.err(format!("could not infer the `{what}` argument of {kind}()"));
        let target = match kind {
            "vector" => {
                let (len, s) = match &types[..] {
                    [] => (length.ok_or_else(|| cannot("length"))?, Scalar::Float32),
                    [Type::Vector(m, s)] => {
                        if length.is_some_and(|l| l != *m) {
                            return Err(
                                self.err("incompatible vector length in a copy constructor")
                            );
                        }
                        (*m, *s)
                    }
                    [Type::Scalar(s)] => (length.ok_or_else(|| cannot("length"))?, *s),
                    _ => {
                        if length.is_some_and(|l| usize::from(l) != n) || n > 255 {
                            return Err(self.err(format!(
                                "incompatible number of values given ({n}) when constructing a vector"
                            )));
                        }
                        let s = match dtype {
                            Some(s) => s,
                            None => common().ok_or_else(|| {
                                self.err("all values given when constructing a vector must have the same type")
                            })?,
                        };
                        (n as u8, s)
                    }
                };
                Value::Vector(len, dtype.unwrap_or(s))
            }
            "matrix" => {
                let ((r, c), s) = match &types[..] {
                    [] => (shape.ok_or_else(|| cannot("shape"))?, Scalar::Float32),
                    [Type::Matrix(r, c, s)] => {
                        if shape.is_some_and(|d| d != (*r, *c)) {
                            return Err(self.err("incompatible matrix shape in a copy constructor"));
                        }
                        ((*r, *c), *s)
                    }
                    [Type::Scalar(s)] => (shape.ok_or_else(|| cannot("shape"))?, *s),
                    _ => {
                        let (r, c) = shape.ok_or_else(|| cannot("shape"))?;
                        if types.iter().all(|t| matches!(t, Type::Vector(..))) {
                            return Err(self.err("Passing vectors to `wp.matrix()` isn't supported, use `wp.matrix_from_rows()` or `wp.matrix_from_cols()` instead."));
                        }
                        if usize::from(r) * usize::from(c) != n {
                            return Err(self.err(format!(
                                "incompatible number of values given ({n}) when constructing a matrix of shape ({r}, {c})"
                            )));
                        }
                        let s = match dtype {
                            Some(s) => s,
                            None => common().ok_or_else(|| {
                                self.err("all values given when constructing a matrix must have the same type")
                            })?,
                        };
                        ((r, c), s)
                    }
                };
                Value::Matrix(r, c, dtype.unwrap_or(s))
            }
            "quaternion" => {
                let s = match (&types[..], dtype) {
                    (_, Some(s)) => s,
                    ([], None) => Scalar::Float32,
                    ([Type::Quat(s)], None) => *s,
                    ([_], None) => return Err(cannot("dtype")),
                    (_, None) => common().ok_or_else(|| {
                        self.err("all values given when constructing a quaternion must have the same type")
                    })?,
                };
                if !s.is_float() {
                    return Err(self.err("a quaternion's dtype must be a float type"));
                }
                Value::Quat(s)
            }
            _ => {
                let s = match (&types[..], dtype) {
                    (_, Some(s)) => s,
                    ([], None) => Scalar::Float32,
                    ([Type::Transform(s)] | [Type::Scalar(s)], None) => *s,
                    ([Type::Vector(3, s), ..], None) if n <= 2 => *s,
                    (_, None) if n == 7 => common().ok_or_else(|| {
                        self.err("all values given when constructing a transform must have the same type")
                    })?,
                    _ => {
                        return Err(self.err(format!(
                            "incompatible number of values given ({n}) when constructing a transform; expected 0, 1, or 7"
                        )));
                    }
                };
                Value::Transform(s)
            }
        };
        self.construct_from(target, vals)
    }

    /// The constant values of a tuple variable's elements, when all are integer constants.
    fn tuple_int_constants(&self, v: VarId) -> Option<Vec<i128>> {
        let (_, elems) = self.tuples.iter().find(|(t, _)| *t == v)?;
        elems
            .iter()
            .map(|e| match self.var(*e).constant {
                Some(ConstVal::Int(i)) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// Emits the construction of `target` from the evaluated arguments `vals`.
    fn construct_from(&mut self, target: Value, vals: Vars) -> LResult<VarId> {
        let dtype = target.dtype();
        let scalar_args = vals
            .iter()
            .all(|v| matches!(self.ty(*v).strip_ref(), Type::Scalar(_)));
        // Constant scalars of another type are converted to the component type.
        let cast: Vec<bool> = vals
            .iter()
            .map(|v| {
                scalar_args
                    && self.var(*v).constant.is_some()
                    && !matches!(self.var(*v).constant, Some(ConstVal::Bool(_)))
                    && *self.ty(*v) != Type::Scalar(dtype)
            })
            .collect();
        let types: Vec<Type> = vals
            .iter()
            .zip(&cast)
            .map(|(v, c)| {
                if *c {
                    Type::Scalar(dtype)
                } else {
                    self.ty(*v).strip_ref()
                }
            })
            .collect();
        let n = vals.len();
        let (native, adj_native, init_list) = match target {
            Value::Transform(s) => {
                let ok = match &types[..] {
                    [] => true,
                    [Type::Scalar(a)] | [Type::Transform(a)] => *a == s,
                    [Type::Vector(3, a), Type::Quat(b)] => *a == s && *b == s,
                    // `q` left out: the identity rotation, a constant
                    [Type::Vector(3, a)] => *a == s,
                    ts => ts.len() == 7 && ts.iter().all(|t| *t == Type::Scalar(s)),
                };
                if !ok {
                    let shown: Vec<String> = types.iter().map(|t| t.to_string()).collect();
                    return Err(self.err(format!(
                        "couldn't construct {target} from arguments '{}'",
                        shown.join(", ")
                    )));
                }
                (
                    format!("transform_t<{}>", s.ctype()),
                    "transform_t",
                    n > 1 && scalar_args,
                )
            }
            // `wp.spatial_vector(w, v)` from its two 3D parts.
            Value::Vector(6, s) if matches!(&types[..], [Type::Vector(3, a), Type::Vector(3, b)] if *a == s && *b == s) => {
                (format!("vec_t<6, {}>", s.ctype()), "vec_t", false)
            }
            _ => {
                let ov = builtins::resolve_constructor(target, &types).map_err(|m| self.err(m))?;
                let init = match target {
                    Value::Vector(..) => n > 4,
                    Value::Matrix(r, c, _) => !(n <= 1 || (r == c && c < 5)),
                    _ => false,
                };
                let adj_native = match target {
                    Value::Vector(..) => "vec_t",
                    Value::Matrix(..) => "mat_t",
                    _ => "quat_t",
                };
                (ov.native.into_owned(), adj_native, init)
            }
        };
        self.use_builtin(&target.to_string());
        let out = self.add_var(target.to_type(), None);
        let mut fwd = Vars::new();
        let mut rev = Vars::new();
        let mut vals = vals;
        let mut cast = cast;
        if let (Value::Transform(s), [Type::Vector(3, _)]) = (target, &types[..]) {
            // warp's default `q`: a constant identity quaternion, after the output.
            let identity = CompositeConst {
                ty: Value::Quat(s),
                items: vec![
                    ConstVal::Float(0.0),
                    ConstVal::Float(0.0),
                    ConstVal::Float(0.0),
                    ConstVal::Float(1.0),
                ],
            };
            let q = self.add_var(
                Type::Quat(s),
                Some(ConstVal::Composite(CompositeId::intern(identity))),
            );
            vals.push(q);
            cast.push(false);
        }
        for (v, c) in vals.iter().zip(&cast) {
            if *c {
                let k = self.var(*v).constant.expect("a constant");
                let k = match (k, dtype.is_float()) {
                    (ConstVal::Float(f), false) => ConstVal::Int(f.trunc() as i128),
                    (k, _) => k,
                };
                let casted = self.add_var(Type::Scalar(dtype), Some(k));
                fwd.push(casted);
                rev.push(casted);
            } else {
                fwd.push(*v);
                rev.push(*v);
            }
        }
        for f in fwd.iter_mut() {
            *f = self.load(*f)?;
        }
        // The lines written in place (no joined lists): an initializer list
        // braces the arguments and passes the adjoints' addresses.
        let (open, close, address) = if init_list {
            ("{", "}", "&")
        } else {
            ("", "", "")
        };
        let mut line = self.new_line();
        line.put_all(&[self.emit(out), " = wp::", &native, "(", open]);
        self.push_names(&mut line, fwd.iter().map(|v| self.emit(*v)));
        line.put_all(&[close, ");"]);
        self.push_forward_line(line);
        if n > 0 {
            let mut line = self.new_line();
            line.put_all(&["wp::adj_", adj_native, "(", open]);
            self.push_names(&mut line, fwd.iter().map(|v| self.emit(*v)));
            line.put_all(&[close, ", ", open]);
            for (i, v) in rev.iter().enumerate() {
                if i > 0 {
                    line.put(", ");
                }
                line.put_all(&[address, self.var(*v).adj()]);
            }
            line.put_all(&[close, ", ", self.var(out).adj(), ");"]);
            self.push_reverse_line(line);
        }
        Ok(out)
    }

    fn construct_struct(
        &mut self,
        id: StructId,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let def = id.def();
        self.use_struct(id);
        let mut vals: Vec<Option<VarId>> = vec![None; def.fields.len().max(args.len())];
        for (i, a) in args.iter().enumerate() {
            vals[i] = Some(self.call_arg(a)?);
        }
        for kw in kwargs {
            let Some((i, _)) = kw.arg.and_then(|k| def.field(k)) else {
                return Err(self.err(format!(
                    "struct '{}' has no field '{}'",
                    def.key,
                    kw.arg.unwrap_or("**")
                )));
            };
            vals[i] = Some(self.call_arg(&kw.value)?);
        }
        let given: Vec<VarId> = vals.iter().flatten().copied().collect();
        let types: Vec<Type> = given.iter().map(|v| self.ty(*v).strip_ref()).collect();
        let expected: Vec<Type> = def.fields.iter().map(|(_, t)| *t).collect();
        if !given.is_empty() && (given.len() != vals.len() || types != expected) {
            let shown: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            return Err(self.err(format!(
                "Couldn't find function overload for '{}' that matched inputs with types: [{}]",
                def.native,
                shown.join(", ")
            )));
        }
        let out = self.add_var(Type::Struct(id), None);
        let mut fwd = Vars::new();
        for v in &given {
            fwd.push(self.load(*v)?);
        }
        let names: Vec<&str> = fwd.iter().map(|v| self.emit(*v)).collect();
        let joined = names.join(", ");
        forward!(self, "{} = {}({joined});", self.emit(out), def.native);
        if !given.is_empty() {
            let adjs: Vec<&str> = given.iter().map(|v| self.var(*v).adj()).collect();
            let line = format!(
                "adj_{}({joined}, {}, {});",
                def.native,
                adjs.join(", "),
                self.var(out).adj()
            );
            self.add_reverse(&line);
        }
        Ok(out)
    }
}
