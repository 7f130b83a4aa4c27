//! gix-object's [`Find`](gix_object::Find), [`FindHeader`](gix_object::FindHeader) and
//! [`Exists`](gix_object::Exists) on [`Objects`], through [`Objects::answer`]. Their errors are gix's, as the
//! traits require: this crate's [`Error`](crate::Error) boxed (see there how to get it back).

use crate::answer::Want;
use crate::convert::kind_to_gix;
use crate::objects::Objects;

impl gix_object::Find for Objects {
    fn try_find<'a>(
        &self,
        id: &gix_hash::oid,
        buffer: &'a mut Vec<u8>,
    ) -> gix_error::Result<Option<gix_object::Data<'a>>> {
        let Some(answer) = self
            .answer(id, Want::CONTENTS, buffer)
            .map_err(gix_error::Error::from_error)?
        else {
            return Ok(None);
        };
        Ok(Some(gix_object::Data {
            kind: answer.kind.expect("asked for"),
            object_hash: kind_to_gix(self.kind),
            data: buffer,
        }))
    }
}

impl gix_object::FindHeader for Objects {
    fn try_header(&self, id: &gix_hash::oid) -> gix_error::Result<Option<gix_object::Header>> {
        Ok(self
            .info(id)
            .map_err(gix_error::Error::from_error)?
            .map(|i| gix_object::Header {
                kind: i.kind,
                size: i.size,
            }))
    }
}

impl gix_object::Exists for Objects {
    fn exists(&self, id: &gix_hash::oid) -> bool {
        matches!(self.place(id), Ok(Some(_)))
    }
}
